// Package apitime holds the wire formats of part 2.1: timestamps are always
// UTC shaped exactly YYYY-MM-DDThh:mm:ssZ (no fractions, no offsets) and
// dates are YYYY-MM-DD, in requests, responses and filters alike. Accepting
// only one shape keeps integrators from sending local times by accident.
package apitime

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"reflect"
	"time"
)

const (
	// TimestampLayout is the only accepted timestamp shape.
	TimestampLayout = "2006-01-02T15:04:05Z"
	// DateLayout is the only accepted date shape.
	DateLayout = "2006-01-02"
)

// Time is a UTC instant truncated to seconds.
type Time struct{ time.Time }

// Date is a calendar date without time zone.
type Date struct{ time.Time }

// At returns t as a Time (UTC, whole seconds).
func At(t time.Time) Time { return Time{t.UTC().Truncate(time.Second)} }

// TimeOf is the UTC instant of a date and time of day (examples).
func TimeOf(year int, month time.Month, day, hour, minute, second int) Time {
	return Time{time.Date(year, month, day, hour, minute, second, 0, time.UTC)}
}

// DateOf is a calendar date (examples).
func DateOf(year int, month time.Month, day int) Date {
	return Date{time.Date(year, month, day, 0, 0, 0, 0, time.UTC)}
}

// The shapes ParseTimestamp and ParseDate accept, as the patterns the
// OpenAPI document gives (issue 26 item 6: a schema as strict as the
// server). A string of the shape may still be no date (2026-02-30), which
// the document's format says.
const (
	TimestampPattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$`
	DatePattern      = `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
)

// ParseTimestamp parses the exact timestamp shape.
func ParseTimestamp(s string) (Time, error) {
	if len(s) != len(TimestampLayout) {
		return Time{}, fmt.Errorf("apitime: %q is not YYYY-MM-DDThh:mm:ssZ", s)
	}
	t, err := time.Parse(TimestampLayout, s)
	if err != nil {
		return Time{}, fmt.Errorf("apitime: %q is not YYYY-MM-DDThh:mm:ssZ: %w", s, err)
	}
	return Time{t}, nil
}

// ParseDate parses the exact date shape.
func ParseDate(s string) (Date, error) {
	if len(s) != len(DateLayout) {
		return Date{}, fmt.Errorf("apitime: %q is not YYYY-MM-DD", s)
	}
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return Date{}, fmt.Errorf("apitime: %q is not YYYY-MM-DD: %w", s, err)
	}
	return Date{t}, nil
}

func (t Time) String() string { return t.UTC().Format(TimestampLayout) }
func (d Date) String() string { return d.Format(DateLayout) }

// MarshalJSON renders the exact shape.
func (t Time) MarshalJSON() ([]byte, error) { return []byte(`"` + t.String() + `"`), nil }

// MarshalJSON renders the exact shape.
func (d Date) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// UnmarshalJSON accepts only the exact shape. It fails with a
// *json.UnmarshalTypeError so that encoding/json adds the field path, which
// the request decoder turns into a 422 naming the field.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeOf(Time{})}
	}
	v, err := ParseTimestamp(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: s, Type: reflect.TypeOf(Time{})}
	}
	*t = v
	return nil
}

// UnmarshalJSON accepts only the exact shape (see Time.UnmarshalJSON).
func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeOf(Date{})}
	}
	v, err := ParseDate(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: s, Type: reflect.TypeOf(Date{})}
	}
	*d = v
	return nil
}

// Value stores a Time as timestamptz.
func (t Time) Value() (driver.Value, error) { return t.Time.UTC(), nil }

// Scan reads a timestamptz.
func (t *Time) Scan(src any) error {
	v, ok := src.(time.Time)
	if !ok {
		return fmt.Errorf("apitime: cannot scan %T into Time", src)
	}
	*t = At(v)
	return nil
}

// Value stores a Date as date.
func (d Date) Value() (driver.Value, error) { return d.Format(DateLayout), nil }

// Scan reads a date.
func (d *Date) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*d = Date{time.Date(v.Year(), v.Month(), v.Day(), 0, 0, 0, 0, time.UTC)}
	case string:
		p, err := ParseDate(v)
		if err != nil {
			return err
		}
		*d = p
	default:
		return fmt.Errorf("apitime: cannot scan %T into Date", src)
	}
	return nil
}

// IsTimeType reports whether typ is one of this package's types, so the
// request decoder can name the expected shape in its field error.
func IsTimeType(typ reflect.Type) (timestamp, date bool) {
	for typ != nil && typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	return typ == reflect.TypeOf(Time{}), typ == reflect.TypeOf(Date{})
}
