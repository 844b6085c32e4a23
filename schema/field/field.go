// Package field holds request field types that tell "omitted" from "null"
// from a value, which PATCH bodies and switches like `task: null` need.
package field

import (
	"bytes"
	"encoding/json"
)

// Opt is an optional, nullable request field.
type Opt[T any] struct {
	Set   bool // present in the body (null included)
	Null  bool // present and null
	Value T
}

// UnmarshalJSON records presence; encoding/json calls it only for present keys.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// MarshalJSON renders null when unset or null.
func (o Opt[T]) MarshalJSON() ([]byte, error) {
	if !o.Set || o.Null {
		return []byte("null"), nil
	}
	return json.Marshal(o.Value)
}

// Ptr returns a pointer to the value, nil when unset or null.
func (o Opt[T]) Ptr() *T {
	if !o.Set || o.Null {
		return nil
	}
	v := o.Value
	return &v
}
