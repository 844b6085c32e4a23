package testkit

import (
	"errors"
	"testing"

	"oficina/schema/apierr"
)

// Refused fails t unless err, a refused request's error, is an error of
// the catalogue below 500 and, as validation_failed, names its fields
// (part 7: bad input never becomes a 500). The fuzz targets of the request
// bodies share it; what says which request.
func Refused(t testing.TB, what string, err error) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status() >= 500 {
		t.Fatalf("%s: %v is not a catalogue error", what, err)
	}
	if e.Code == apierr.ValidationFailed && len(e.Fields) == 0 {
		t.Fatalf("%s: validation_failed without errors[]", what)
	}
}
