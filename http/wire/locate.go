package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// A type error of encoding/json names its field by the member names on the
// way, without array indexes ("items.unit_price_cents"), and its offset is
// relative to whatever custom decoder (field.Opt, apitime) was running.
// locate finds the value it is about in the request body instead, so the
// 422 names it as validation does: items[1].unit_price_cents.

// splitField splits a type error's field into member names.
func splitField(f string) []string {
	if f == "" {
		return nil
	}
	return strings.Split(f, ".")
}

// locate follows the member names chain through the JSON value raw (at
// path), into every element of the arrays on the way, and returns the
// path of the first value, in document order, that does not decode into
// t: the one encoding/json stopped at, since it reports the first error of
// the document. A name the JSON does not have, with names after it, is
// skipped: Go puts the names of embedded structs in the field
// ("items.Base.price"). ok is false when nothing fails.
func locate(raw []byte, path string, chain []string, t reflect.Type) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || t == nil {
		return "", false
	}
	switch {
	case raw[0] == '{' && len(chain) > 0:
		var members map[string]json.RawMessage // duplicates were refused by scan
		if json.Unmarshal(raw, &members) != nil {
			return "", false
		}
		if v, ok := members[chain[0]]; ok {
			return locate(v, join(path, chain[0]), chain[1:], t)
		}
		if len(chain) == 1 {
			return "", false // this item does not have the member
		}
		return locate(raw, path, chain[1:], t) // an embedded struct's name
	case raw[0] == '[' && (len(chain) > 0 || !isList(t)):
		// The chain goes on inside the elements, or the error is about an
		// element (a number where an item object was due) — or, when no
		// element fails, about the array itself (an array where a number
		// was due).
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return "", false
		}
		for i, e := range elems {
			if p, ok := locate(e, path+"["+strconv.Itoa(i)+"]", chain, t); ok {
				return p, true
			}
		}
		if len(chain) > 0 {
			return "", false
		}
	case len(chain) > 0:
		return "", false
	}
	if json.Unmarshal(raw, reflect.New(t).Interface()) == nil {
		return "", false
	}
	return path, true
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func isList(t reflect.Type) bool {
	t = deref(t)
	return t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array)
}
