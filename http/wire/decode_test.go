package wire

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/field"
)

type sample struct {
	Name     string             `json:"name"`
	Count    int                `json:"count"`
	At       *apitime.Time      `json:"at"`
	Day      *apitime.Date      `json:"day"`
	Items    []struct{ Q int }  `json:"items"`
	Optional field.Opt[string]  `json:"optional" api:"nullable"`
	Nested   *struct{ X int32 } `json:"nested"`
}

func fieldOf(err error) (code apierr.Code, param, fieldCode string) {
	var e *apierr.Error
	if !errors.As(err, &e) {
		return "", "", ""
	}
	if len(e.Fields) > 0 {
		return e.Code, e.Fields[0].Param, string(e.Fields[0].Code)
	}
	return e.Code, "", ""
}

// Part 2.1 and 7: a malformed value is a 422 naming the field; broken JSON
// is 400.
func TestDecodeNamesTheInvalidField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body      string
		code      apierr.Code
		param, fc string
	}{
		{`{"name":"x"}`, "", "", ""},
		{``, "", "", ""},
		{`{"at":"2026-01-02T03:04:05Z","day":"2026-01-02"}`, "", "", ""},
		{`{"at":"2026-01-02T03:04:05.000Z"}`, apierr.ValidationFailed, "at", "invalid_timestamp"},
		{`{"at":"2026-01-02T03:04:05-03:00"}`, apierr.ValidationFailed, "at", "invalid_timestamp"},
		{`{"day":"02/01/2026"}`, apierr.ValidationFailed, "day", "invalid_date"},
		{`{"count":"3"}`, apierr.ValidationFailed, "count", "invalid_type"},
		{`{"count":1e40}`, apierr.ValidationFailed, "count", "out_of_range"},
		{`{"count":1.5}`, apierr.ValidationFailed, "count", "invalid_type"},
		{`{"nested":{"X":99999999999}}`, apierr.ValidationFailed, "nested.X", "out_of_range"},
		{`{"items":[{"Q":"a"}]}`, apierr.ValidationFailed, "items[0].Q", "invalid_type"},
		{`{"items":[{"Q":1},{"Q":"a"}]}`, apierr.ValidationFailed, "items[1].Q", "invalid_type"},
		{`{"items":[{"Q":1},{"Q":1e40}]}`, apierr.ValidationFailed, "items[1].Q", "out_of_range"},
		{`{"items":[{"Q":1},5]}`, apierr.ValidationFailed, "items[1]", "invalid_type"},
		{`{"items":{"Q":1}}`, apierr.ValidationFailed, "items", "invalid_type"},
		{`{"optional":5}`, apierr.ValidationFailed, "optional", "invalid_type"},
		{`{"bogus":1}`, apierr.ValidationFailed, "bogus", "unknown_field"},
		{`{"":""}`, apierr.ValidationFailed, "body", "unknown_field"},
		{`{"name":"a","name":"b"}`, apierr.ValidationFailed, "name", "invalid_value"},
		{`{"name":`, apierr.InvalidRequest, "", ""},
		{`null`, apierr.InvalidRequest, "", ""},
		{`"x"`, apierr.InvalidRequest, "", ""},
		{`{} {}`, apierr.InvalidRequest, "", ""},
		{"{\"name\":\"a\x00\"}", apierr.InvalidRequest, "", ""},
	} {
		var v sample
		code, param, fc := fieldOf(DecodeBytes([]byte(tc.body), &v))
		if code != tc.code || param != tc.param || fc != tc.fc {
			t.Errorf("%s: got %s %s %s, want %s %s %s", tc.body, code, param, fc, tc.code, tc.param, tc.fc)
		}
	}
}

// Null is taken only where the member is tagged nullable (the OpenAPI
// document says the same): elsewhere, and as an array element, it is 422
// invalid_value naming the member, never a silent "omitted".
func TestNullOnlyWhereNullable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, param string }{
		{`{"name":null}`, "name"},
		{`{"at":null}`, "at"},
		{`{"items":null}`, "items"},
		{`{"items":[null]}`, "items[0]"},
		{`{"items":[{"Q":1},null]}`, "items[1]"},
		{`{"nested":null}`, "nested"},
	} {
		var v sample
		code, param, fc := fieldOf(DecodeBytes([]byte(tc.body), &v))
		if code != apierr.ValidationFailed || param != tc.param || fc != "invalid_value" {
			t.Errorf("%s: got %s %s %s, want validation_failed %s invalid_value", tc.body, code, param, fc, tc.param)
		}
	}
	var v sample
	if err := DecodeBytes([]byte(`{"optional":null}`), &v); err != nil || !v.Optional.Null {
		t.Errorf("a nullable member refused null: %v %+v", err, v.Optional)
	}
}

func TestOptTellsOmittedFromNull(t *testing.T) {
	t.Parallel()
	var a, b, c sample
	_ = DecodeBytes([]byte(`{}`), &a)
	_ = DecodeBytes([]byte(`{"optional":null}`), &b)
	_ = DecodeBytes([]byte(`{"optional":"v"}`), &c)
	if a.Optional.Set || !b.Optional.Null || c.Optional.Value != "v" || c.Optional.Null {
		t.Fatalf("%+v %+v %+v", a.Optional, b.Optional, c.Optional)
	}
}

// Part 8: the body ceiling is enforced before the body is read.
func TestCheckBodyRefusesBeforeReading(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "/", strings.NewReader("{}"))
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = MaxBody + 1
	if code, _, _ := fieldOf(CheckBody(httptest.NewRecorder(), r)); code != apierr.RequestTooLarge {
		t.Fatalf("declared length: %s", code)
	}
	// Without a declared length the reader stops past the limit.
	r = httptest.NewRequest("POST", "/", strings.NewReader("{\"a\":\""+strings.Repeat("x", MaxBody)+"\"}"))
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	r.ContentLength = -1
	w := httptest.NewRecorder()
	if err := CheckBody(w, r); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if code, _, _ := fieldOf(Decode(r, &v)); code != apierr.RequestTooLarge {
		t.Fatalf("streamed: %s", code)
	}
	for ct, want := range map[string]apierr.Code{
		"application/json": "", "application/merge-patch+json": "", "APPLICATION/JSON": "",
		"application/json; charset=latin1": apierr.UnsupportedMediaType, "": apierr.UnsupportedMediaType,
		"text/json": apierr.UnsupportedMediaType, "application/xml": apierr.UnsupportedMediaType,
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader("{}"))
		r.Header.Set("Content-Type", ct)
		if code, _, _ := fieldOf(CheckBody(httptest.NewRecorder(), r)); code != want {
			t.Errorf("%q: %s, want %s", ct, code, want)
		}
	}
	get := httptest.NewRequest(http.MethodPost, "/", http.NoBody)
	if err := CheckBody(httptest.NewRecorder(), get); err != nil {
		t.Fatalf("empty body refused: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"x","count":1}`, `{"at":"2026-01-02T03:04:05Z"}`, `{"items":[{"Q":1}]}`, `{"a":{"a":{"a":1}}}`, `{"name":"a","name":"b"}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v sample
		err := DecodeBytes(b, &v)
		if err == nil {
			return
		}
		var e *apierr.Error
		if !errors.As(err, &e) || (e.Code != apierr.InvalidRequest && e.Code != apierr.ValidationFailed) {
			t.Fatalf("decode error outside the catalogue: %v", err)
		}
	})
}

type embeddedBase struct {
	Price int64 `json:"price"`
}

type withEmbedded struct {
	Items []struct {
		embeddedBase
		Q int `json:"q"`
	} `json:"items"`
}

// A field promoted from an embedded struct is named by its JSON path:
// encoding/json puts the embedded struct's Go name in the error's field.
func TestTypeErrorInAnEmbeddedStructNamesTheJSONPath(t *testing.T) {
	t.Parallel()
	var v withEmbedded
	if _, param, fc := fieldOf(DecodeBytes([]byte(`{"items":[{"q":1},{"price":"x"}]}`), &v)); param != "items[1].price" || fc != "invalid_type" {
		t.Fatalf("got %s %s", param, fc)
	}
}

// Issue 24 item 1: a numeral longer than any field's range is 422
// out_of_range without its value being read (big.ParseFloat's cost grows
// with the square of the length: a million digits took seconds of CPU),
// wherever it stands; shorter numerals keep their answers.
func TestANumeralLongerThanAnyRangeIsOutOfRangeUnread(t *testing.T) {
	t.Parallel()
	million := strings.Repeat("9", 1_000_000)
	longest := "1" + strings.Repeat("0", maxNumeral-1) // 1e39: read, the last that is
	for _, tc := range []struct {
		name, body string
		code       apierr.Code
		param, fc  string
	}{
		{"a million digits", `{"count":` + million + `}`, apierr.ValidationFailed, "count", "out_of_range"},
		{"a million negative digits", `{"count":-` + million + `}`, apierr.ValidationFailed, "count", "out_of_range"},
		{"a million-digit fraction", `{"count":0.` + million + `}`, apierr.ValidationFailed, "count", "out_of_range"},
		{"a million-digit exponent", `{"count":1e` + million + `}`, apierr.ValidationFailed, "count", "out_of_range"},
		{"a million zeros after the point", `{"count":1.` + strings.Repeat("0", 1_000_000) + `}`, apierr.ValidationFailed, "count", "out_of_range"},
		{"in an array item", `{"items":[{"Q":1},{"Q":` + million + `}]}`, apierr.ValidationFailed, "items[1].Q", "out_of_range"},
		{"in an int32", `{"nested":{"X":` + million + `}}`, apierr.ValidationFailed, "nested.X", "out_of_range"},
		{"one over the bound", `{"count":` + longest + `0}`, apierr.ValidationFailed, "count", "out_of_range"},
		{"at the bound", `{"count":` + longest + `}`, apierr.ValidationFailed, "count", "out_of_range"},
		{"1e40", `{"count":1e40}`, apierr.ValidationFailed, "count", "out_of_range"},
		{"1e2", `{"count":1e2}`, apierr.ValidationFailed, "count", "out_of_range"},
		{"100.000", `{"count":100.000}`, apierr.ValidationFailed, "count", "out_of_range"},
		{"1.5", `{"count":1.5}`, apierr.ValidationFailed, "count", "invalid_type"},
		{"1e-2", `{"count":1e-2}`, apierr.ValidationFailed, "count", "invalid_type"},
		{"-0", `{"count":-0}`, "", "", ""},
		{"int64 bound", `{"count":9223372036854775807}`, "", "", ""},
		{"leading zeros", `{"count":007}`, apierr.InvalidRequest, "", ""},
		{"a million leading zeros", `{"count":` + strings.Repeat("0", 1_000_000) + `1}`, apierr.InvalidRequest, "", ""},
	} {
		var v sample
		code, param, fc := fieldOf(DecodeBytes([]byte(tc.body), &v))
		if code != tc.code || param != tc.param || fc != tc.fc {
			t.Errorf("%s: got %s %s %s, want %s %s %s", tc.name, code, param, fc, tc.code, tc.param, tc.fc)
		}
	}
	// The work done: a numeral's value is read only up to the bound.
	for n, want := range map[string]bool{million: false, "-" + million: false, "0." + million: false, "1e" + million: false,
		longest + "0": false, longest: true, "1e40": true, "1.5": true} {
		if _, read := wholeNumeral(n); read != want {
			t.Errorf("a numeral of %d characters: read %v, want %v", len(n), read, want)
		}
	}
}
