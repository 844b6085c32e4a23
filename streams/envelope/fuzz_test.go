package envelope

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func FuzzChangedFields(f *testing.F) {
	f.Add([]byte(`{"a":1,"updated_at":"x"}`), []byte(`{"a":1.0,"b":{"c":[1,2]}}`))
	f.Add([]byte(`{"a":{"x":1,"y":2}}`), []byte(`{"a":{"y":2,"x":1e0}}`))
	f.Add([]byte(`null`), []byte(`{}`))
	f.Add([]byte(`{"a":-0}`), []byte(`{"a":0e-99999999999999999999}`))
	f.Fuzz(func(t *testing.T, before, after []byte) {
		got, err := ChangedFields(before, after)
		if err != nil {
			return
		}
		if got == nil {
			t.Fatal("nil result without error")
		}
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("not sorted and unique: %q", got)
		}
		if slices.Contains(got, updatedAtField) {
			t.Fatalf("updated_at listed: %q", got)
		}
		back, err := ChangedFields(after, before)
		if err != nil || !slices.Equal(got, back) {
			t.Fatalf("not symmetric: %q vs %q (%v)", got, back, err)
		}
		if same, err := ChangedFields(after, after); err != nil || len(same) != 0 {
			t.Fatalf("object differs from itself: %q (%v)", same, err)
		}
	})
}

func FuzzBuild(f *testing.F) {
	// Large objects come from the pad argument rather than from a 256 KB seed:
	// the fuzzing engine stalls minimizing inputs that big.
	f.Add("sale.updated", "org_1", []byte(`{"object":"sale","id":"s1","n":1}`), "notes,updated_at", false, int64(1700000000), uint32(0))
	f.Add("ping", "org_1", []byte(`{"object":"ping","webhook_endpoint_id":"we_1"}`), "", true, int64(0), uint32(0))
	f.Add("task.created", "o", []byte(`{"object":"task","id":7}`), "", true, int64(-62135596800), uint32(0))
	f.Add("a.updated", "o", []byte(`{"object":"x","id":"y"}`), "a", false, int64(1), uint32(MaxBodyBytes))
	f.Add("a.created", "o", []byte(`{"object":"x"}`), "", false, int64(1), uint32(MaxBodyBytes-100))
	f.Fuzz(func(t *testing.T, typ, org string, object []byte, fields string, summarize bool, unix int64, pad uint32) {
		if n := int(pad % (MaxBodyBytes + 1024)); n > 0 && bytes.HasPrefix(object, []byte("{")) {
			object = slices.Concat([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), n), []byte(`",`), object[1:])
		}
		p := Params{
			Type:           typ,
			OrganizationID: org,
			OccurredAt:     time.Unix(unix, 0),
			Object:         object,
			Summarize:      summarize,
		}
		if fields != "" {
			p.ChangedFields = strings.Split(fields, ",")
		}
		ev, body, err := Build(p)
		if err != nil {
			return
		}
		if len(body) > MaxBodyBytes {
			t.Fatalf("body of %d bytes exceeds the cap", len(body))
		}
		if !ValidEventID(ev.ID) || ev.APIVersion != APIVersion {
			t.Fatalf("bad envelope header: %+v", ev)
		}
		if (ev.Data.ChangedFields != nil) != IsUpdate(typ) {
			t.Fatalf("changed_fields presence wrong for %q: %#v", typ, ev.Data.ChangedFields)
		}
		if summarize && !ev.Data.ObjectTruncated {
			t.Fatal("summarized write not truncated")
		}
		var back Event
		if err := json.Unmarshal(body, &back); err != nil {
			t.Fatalf("body does not decode: %v\n%s", err, body)
		}
		if _, err := time.Parse(time.RFC3339, back.Timestamp); err != nil || len(back.Timestamp) != len(TimestampLayout) {
			t.Fatalf("timestamp %q: %v", back.Timestamp, err)
		}
	})
}
