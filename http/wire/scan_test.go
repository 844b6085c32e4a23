package wire

import (
	"testing"

	"oficina/schema/apierr"
	"oficina/schema/field"
)

// docs/api.md: a body is read one way only. Duplicate members, unknown
// names — also those that match a field only in another case (encoding/json
// would take them) — and NUL characters (the database refuses them) are 422
// naming the member by its path.
func TestDecodeReadsABodyOneWayOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body      string
		code      apierr.Code
		param, fc string
	}{
		{`{"name":"a","count":1,"items":[{"Q":1}],"nested":{"X":1}}`, "", "", ""},
		{`{"NAME":"x"}`, apierr.ValidationFailed, "NAME", "unknown_field"},
		{`{"name":"a","Name":"b"}`, apierr.ValidationFailed, "Name", "unknown_field"},
		{`{"Items":[]}`, apierr.ValidationFailed, "Items", "unknown_field"},
		{`{"items":[{"Q":1},{"q":1}]}`, apierr.ValidationFailed, "items[1].q", "unknown_field"},
		{`{"nested":{"x":1}}`, apierr.ValidationFailed, "nested.x", "unknown_field"},
		{`{"items":[{"Q":1},{"Q":1,"Q":2}]}`, apierr.ValidationFailed, "items[1].Q", "invalid_value"},
		{`{"nested":{"X":1,"X":1}}`, apierr.ValidationFailed, "nested.X", "invalid_value"},
		{`{"name":"a\u0000b"}`, apierr.ValidationFailed, "name", "invalid_value"},
		{`{"optional":"\u0000"}`, apierr.ValidationFailed, "optional", "invalid_value"},
		{`{"items":[{"Q":1},{"Q":"\u0000"}],"name":"x"}`, apierr.ValidationFailed, "items[1].Q", "invalid_value"},
		// An unknown member is refused before what it holds is looked at.
		{`{"items":[{"Q":1}],"name":"x","bogus":["\u0000"]}`, apierr.ValidationFailed, "bogus", "unknown_field"},
		{`{"items":[{"Q":1},{"bogus":1}]}`, apierr.ValidationFailed, "items[1].bogus", "unknown_field"},
		{`{"\u0000":1}`, apierr.ValidationFailed, "body", "invalid_value"},
		{`{"name":"\\u0000"}`, "", "", ""}, // an escaped backslash, not a NUL
	} {
		var v sample
		code, param, fc := fieldOf(DecodeBytes([]byte(tc.body), &v))
		if code != tc.code || param != tc.param || fc != tc.fc {
			t.Errorf("%s: got %s %s %s, want %s %s %s", tc.body, code, param, fc, tc.code, tc.param, tc.fc)
		}
	}
	// encoding/json folds the long s (U+017F) to s and the Kelvin sign to k.
	var s struct {
		Seller string `json:"seller_id"`
		Kind   string `json:"kind"`
	}
	for _, body := range []string{"{\"\u017feller_id\":\"x\"}", "{\"\u212aind\":\"x\"}"} {
		if code, _, fc := fieldOf(DecodeBytes([]byte(body), &s)); code != apierr.ValidationFailed || fc != "unknown_field" || s.Seller != "" || s.Kind != "" {
			t.Errorf("%s: %s %s, decoded %+v", body, code, fc, s)
		}
	}
	// Optional wrappers are looked through: the object inside Opt[T].
	var o struct {
		Task field.Opt[struct {
			Title string `json:"title"`
		}] `json:"task"`
	}
	if code, param, fc := fieldOf(DecodeBytes([]byte(`{"task":{"TITLE":"x"}}`), &o)); code != apierr.ValidationFailed ||
		param != "task.TITLE" || fc != "unknown_field" {
		t.Errorf("inside an optional wrapper: %s %s %s", code, param, fc)
	}
	// A map takes any names: "a" and "A" are two members.
	var m map[string]any
	if err := DecodeBytes([]byte(`{"a":1,"A":2}`), &m); err != nil || len(m) != 2 {
		t.Errorf("map: %v %v", m, err)
	}
}
