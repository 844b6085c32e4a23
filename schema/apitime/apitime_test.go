package apitime

import (
	"encoding/json"
	"errors"
	"regexp"
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

// Issue 26 item 6: the patterns the OpenAPI document gives take exactly the
// shapes the parsers take (a fraction, an offset, a space or a short field
// is refused by both).
func TestThePatternsAreTheParsersShapes(t *testing.T) {
	ts, date := regexp.MustCompile(TimestampPattern), regexp.MustCompile(DatePattern)
	for _, s := range []string{"2026-11-28T21:10:05Z", "2026-11-28T21:10:05.5Z", "2026-11-28T21:10:05+00:00", "2026-11-28 21:10:05Z",
		"2026-11-28T21:10:5Z", "2026-11-28", "20261128T211005Z", "2026-11-28T21:10:05z", " 2026-11-28T21:10:05Z"} {
		_, err := ParseTimestamp(s)
		if (err == nil) != ts.MatchString(s) {
			t.Errorf("timestamp %q: parser accepts %v, pattern %v", s, err == nil, ts.MatchString(s))
		}
	}
	for _, s := range []string{"2026-11-28", "2026-1-28", "2026-11-28T00:00:00Z", "26-11-28", "2026/11/28"} {
		_, err := ParseDate(s)
		if (err == nil) != date.MatchString(s) {
			t.Errorf("date %q: parser accepts %v, pattern %v", s, err == nil, date.MatchString(s))
		}
	}
}
