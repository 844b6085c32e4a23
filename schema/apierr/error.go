package apierr

import (
	"database/sql"
	"errors"
	"fmt"
)

// Code is a stable English error code; programs decide on it.
type Code string

// FieldError is one entry of errors[] in a 422 validation_failed.
type FieldError struct {
	Param string
	Code  FieldCode
}

// Error is an API error: a catalogue code, optional field errors, and the
// internal cause for the logs (never shown to the caller).
type Error struct {
	Code   Code
	Fields []FieldError
	Cause  error
}

// New returns an error of the given code.
func New(code Code) *Error { return &Error{Code: code} }

// Wrap returns an error of the given code keeping cause for the logs.
func Wrap(code Code, cause error) *Error { return &Error{Code: code, Cause: cause} }

// Invalid returns a 422 validation_failed naming one field.
func Invalid(param string, fieldCode FieldCode) *Error {
	return &Error{Code: ValidationFailed, Fields: []FieldError{{Param: param, Code: fieldCode}}}
}

func (e *Error) Error() string {
	s := string(e.Code)
	for _, f := range e.Fields {
		s += fmt.Sprintf(" [%s: %s]", f.Param, f.Code)
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Cause }

// Is makes errors.Is(err, apierr.New(code)) match on the code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && len(t.Fields) == 0
}

// Status is the HTTP status of the error's code (500 for unknown codes).
func (e *Error) Status() int {
	if ent, ok := Default.Lookup(e.Code); ok {
		return ent.Status
	}
	return 500
}

// As extracts an *Error from err; anything else is an internal_error.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		if _, ok := Default.Lookup(e.Code); ok {
			return e
		}
	}
	return &Error{Code: InternalError, Cause: err}
}

// Fields collects field errors; its Err is nil while empty, so validators
// can report every invalid field at once.
type Fields []FieldError

// Add records one invalid field.
func (f *Fields) Add(param string, code FieldCode) {
	*f = append(*f, FieldError{Param: param, Code: code})
}

// Err returns the 422 for the collected fields, or nil.
func (f Fields) Err() error {
	if len(f) == 0 {
		return nil
	}
	return &Error{Code: ValidationFailed, Fields: f}
}

// NoRows turns "no rows" into 404 resource_not_found and passes other
// errors through: store functions call it on single-row reads.
func NoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return &Error{Code: ResourceNotFound, Cause: err}
	}
	return err
}
