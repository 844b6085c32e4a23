package testkit

import (
	"context"
	"testing"
	"time"
)

// Background runs a long-lived part of the system (a process's Run, a
// dispatcher) until the test ends: at cleanup its context is cancelled, and
// it must then return nil within 30 s. The returned channel receives what
// run returned, for a caller waiting on an early exit; cleanup reads it
// when nobody did.
func Background(t testing.TB, name string, run func(ctx context.Context) error) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	exited := make(chan error, 1)
	go func() {
		err := run(ctx)
		done <- err
		exited <- err
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not stop", name)
		}
	})
	return exited
}
