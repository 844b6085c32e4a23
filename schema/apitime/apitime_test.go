package apitime

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestTimestampsAreExactlyUTCSeconds(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("BRT", -3*3600)
	b, _ := json.Marshal(At(time.Date(2026, 1, 2, 9, 4, 5, 999, loc)))
	if string(b) != `"2026-01-02T12:04:05Z"` {
		t.Fatalf("got %s", b)
	}
}

func TestOnlyTheExactShapesAreAccepted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`"2026-01-02T12:04:05Z"`, true},
		{`"2026-01-02T12:04:05.123Z"`, false},
		{`"2026-01-02T12:04:05+00:00"`, false},
		{`"2026-01-02 12:04:05Z"`, false},
		{`"2026-01-02"`, false},
		{`"2026-02-30T12:04:05Z"`, false},
		{`1767355445`, false},
		{`"2026-01-02t12:04:05z"`, false},
	} {
		var v struct{ At Time }
		err := json.Unmarshal([]byte(`{"At":`+tc.in+`}`), &v)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.in, err)
		}
		var te *json.UnmarshalTypeError
		if err != nil && (!errors.As(err, &te) || te.Field != "At") {
			t.Errorf("%s: want UnmarshalTypeError naming the field, got %v", tc.in, err)
		}
	}
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`"2026-01-02"`, true}, {`"2026-1-2"`, false}, {`"2026-01-02T00:00:00Z"`, false}, {`"02/01/2026"`, false},
	} {
		var d Date
		if err := json.Unmarshal([]byte(tc.in), &d); (err == nil) != tc.ok {
			t.Errorf("date %s: err = %v", tc.in, err)
		}
	}
}

func FuzzParseTimestamp(f *testing.F) {
	f.Add("2026-01-02T12:04:05Z")
	f.Add("9999-12-31T23:59:59Z")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseTimestamp(s)
		if err == nil && v.String() != s {
			t.Fatalf("round trip %q -> %q", s, v.String())
		}
	})
}
