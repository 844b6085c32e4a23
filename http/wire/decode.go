package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
)

// MaxBody is the request body ceiling (part 8): 1 MB.
const MaxBody = 1 << 20

// CheckBody enforces the body rules before any work: a body must be JSON
// (415) and at most 1 MB (413). The declared length is checked first so an
// oversized body is refused without being read; a body without a length is
// capped by a reader that stops one byte past the limit.
func CheckBody(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength == 0 || (r.ContentLength < 0 && r.Body == nil) || r.Body == http.NoBody {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !isJSON(mt) {
		return apierr.New(apierr.UnsupportedMediaType)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return apierr.New(apierr.UnsupportedMediaType)
	}
	if r.ContentLength > MaxBody {
		return apierr.New(apierr.RequestTooLarge)
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	return nil
}

func isJSON(mt string) bool {
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// Decode reads the whole body into v strictly: unknown fields (also a
// known name in another case), duplicate members, NUL characters, wrong
// types and malformed timestamps are 422 naming the field; broken JSON or
// trailing data is 400; an oversized body is 413. An empty body decodes as
// {}.
func Decode(r *http.Request, v any) error {
	var buf []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return apierr.New(apierr.RequestTooLarge)
		}
		if err != nil {
			return apierr.Wrap(apierr.InvalidRequest, err)
		}
		buf = b
	}
	return DecodeBytes(buf, v)
}

// DecodeBytes is Decode over a byte slice (used by tests and fuzzing).
func DecodeBytes(buf []byte, v any) error {
	if len(bytes.TrimSpace(buf)) == 0 {
		buf = []byte("{}")
	}
	if !utf8.Valid(buf) || !json.Valid(buf) {
		return apierr.New(apierr.InvalidRequest)
	}
	if t := bytes.TrimSpace(buf); t[0] != '{' {
		return apierr.New(apierr.InvalidRequest)
	}
	if err := scan(buf, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(buf))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(buf, err)
	}
	return nil
}

func decodeError(buf []byte, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		param := te.Field
		if p, ok := locate(buf, "", splitField(te.Field), te.Type); ok {
			param = p
		}
		if param == "" {
			param = "body"
		}
		code := apierr.InvalidType
		if ts, d := apitime.IsTimeType(te.Type); ts {
			code = apierr.InvalidTimestamp
		} else if d {
			code = apierr.InvalidDate
		} else if isNumber(te.Type) && integral(te.Value) {
			code = apierr.OutOfRange
		}
		return apierr.Invalid(param, code)
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		name := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		if name == "" {
			name = "body" // a member with an empty name still needs a param to point at
		}
		return apierr.Invalid(name, apierr.UnknownField)
	}
	return apierr.Wrap(apierr.InvalidRequest, err)
}

// maxNumeral is the longest numeral integral reads. No field's range needs
// more: an int64 has 19 digits, a float64 is written exactly in 17
// significant digits and a three-digit exponent; 40 characters leave room
// for a sign, a point, zeros and an exponent's sign. A body holds up to
// 1 MB, and the cost of reading a numeral's value (big.ParseFloat) grows
// with the square of its length: a million digits took seconds of CPU.
const maxNumeral = 40

// integral reports whether a type error's value ("number 1e40") is a whole
// number, i.e. the field's type is right and the magnitude is not.
func integral(value string) bool {
	n, ok := strings.CutPrefix(value, "number ")
	if !ok {
		return false
	}
	whole, _ := wholeNumeral(n)
	return whole
}

// wholeNumeral reports whether the numeral n is a whole number, and whether
// its value had to be read to say so. A numeral longer than maxNumeral is
// whole (out_of_range) unread: no field holds it, and telling a long
// fraction from a long whole number would mean reading it.
func wholeNumeral(n string) (whole, read bool) {
	if len(n) > maxNumeral {
		return true, false
	}
	f, _, err := big.ParseFloat(n, 10, 256, big.ToNearestEven)
	return err == nil && f.IsInt(), true
}

func isNumber(t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
