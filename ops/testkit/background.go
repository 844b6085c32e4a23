package testkit

import (
	"context"
	"sync"
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
	_, exited := Stoppable(t, name, run)
	return exited
}

// Stoppable is Background with a stop, for a test that ends the part
// before it ends itself (a restart): stop cancels run's context and waits
// for it as cleanup would, once; cleanup then has nothing left to do.
func Stoppable(t testing.TB, name string, run func(ctx context.Context) error) (stop func(), exited <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	out := make(chan error, 1)
	go func() {
		err := run(ctx)
		done <- err
		out <- err
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
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
	}
	t.Cleanup(stop)
	return stop, out
}
