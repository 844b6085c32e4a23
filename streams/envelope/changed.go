package envelope

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// updatedAtField never appears in changed_fields (spec 6.3 rule 1): it changes
// on every write and would make the list useless.
const updatedAtField = "updated_at"

// ChangedFields compares two GET representations of the same resource and
// returns the top-level fields whose JSON values differ, in alphabetical
// order, never "updated_at". The result is non-nil; an empty result means the
// write changed nothing, and the caller then emits no ".updated" event (spec
// 6.3 rule 3).
//
// Choices, since the spec leaves them open:
//   - Only top-level keys are reported; a change inside a nested object or
//     array reports the top-level field that holds it ("items", not
//     "items[2].quantity"), because receivers refetch the resource anyway.
//   - Values are compared as JSON, not as bytes: member order inside objects,
//     insignificant whitespace, string escapes and number spelling (1, 1.0,
//     1e0) do not count as changes. Numbers compare exactly as decimals, so
//     ids and amounts beyond 2^53 are not rounded into false "unchanged".
//   - A field present on one side only (including absent vs null) is changed.
//
// Both inputs must be JSON objects.
func ChangedFields(before, after json.RawMessage) ([]string, error) {
	b, err := topLevel(before)
	if err != nil {
		return nil, fmt.Errorf("envelope: changed fields, before: %w", err)
	}
	a, err := topLevel(after)
	if err != nil {
		return nil, fmt.Errorf("envelope: changed fields, after: %w", err)
	}
	changed := []string{}
	for k, av := range a {
		if k == updatedAtField {
			continue
		}
		bv, ok := b[k]
		if !ok {
			changed = append(changed, k)
			continue
		}
		same, err := sameJSON(bv, av)
		if err != nil {
			return nil, fmt.Errorf("envelope: changed fields, %q: %w", k, err)
		}
		if !same {
			changed = append(changed, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && k != updatedAtField {
			changed = append(changed, k) // removed
		}
	}
	slices.Sort(changed)
	return changed, nil
}

// topLevel splits a JSON object into its members, refusing anything else
// (including null, which json.Unmarshal would accept as a nil map).
func topLevel(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object: null")
	}
	return m, nil
}

// sameJSON reports whether two valid JSON values are equal as JSON.
func sameJSON(x, y json.RawMessage) (bool, error) {
	if bytes.Equal(x, y) {
		return true, nil // the common case: an untouched field
	}
	vx, err := decodeExact(x)
	if err != nil {
		return false, err
	}
	vy, err := decodeExact(y)
	if err != nil {
		return false, err
	}
	return equalValues(vx, vy), nil
}

// decodeExact decodes with json.Number so numbers keep their full text.
func decodeExact(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return v, nil
}

// equalValues compares values produced by decodeExact.
func equalValues(x, y any) bool {
	switch x := x.(type) {
	case nil:
		return y == nil
	case bool:
		y, ok := y.(bool)
		return ok && x == y
	case string:
		y, ok := y.(string)
		return ok && x == y
	case json.Number:
		y, ok := y.(json.Number)
		return ok && (x == y || canonicalNumber(string(x)) == canonicalNumber(string(y)))
	case []any:
		y, ok := y.([]any)
		return ok && slices.EqualFunc(x, y, equalValues)
	case map[string]any:
		y, ok := y.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalValues(xv, yv) {
				return false
			}
		}
		return true
	}
	return false // not produced by decodeExact
}
