package jsconfig

import (
	"context"
	"testing"
	"time"
)

// A relay or dispatcher started before serve waits for the streams
// instead of creating them (its user may not), and goes on once they exist.
func TestAwaitWaitsUntilTheStreamsExist(t *testing.T) {
	t.Parallel()
	ctx, js := startJS(t)
	missed := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Await(ctx, js, func(name string, _ error) {
			select {
			case missed <- name:
			default:
			}
		}, EventsStream, DeliveriesStream)
	}()
	select {
	case name := <-missed:
		if name != EventsStream {
			t.Fatalf("first miss on %s", name)
		}
	case err := <-done:
		t.Fatalf("Await returned %v before the streams existed", err)
	}
	if err := Ensure(ctx, js, DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Await: %v", err)
	}

	gone, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := Await(gone, js, nil, "NO_SUCH_STREAM"); err == nil {
		t.Fatal("Await returned nil for a stream that never came")
	}
}
