package pace_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"oficina/ops/proving/pace"
)

// Every lane sends, each counting its own sends from 0; Stop returns only
// after the sends in flight have returned, nothing is sent after it, and a
// second Stop is harmless.
func TestLanesSendUntilStopped(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		next     = map[int]int{}
		inFlight atomic.Int32
	)
	d := pace.Start(t.Context(), 3, time.Millisecond, func(_ context.Context, lane, n int) {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		mu.Lock()
		if n != next[lane] {
			t.Errorf("lane %d: send %d, want %d", lane, n, next[lane])
		}
		next[lane] = n + 1
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		done := len(next) == 3 && next[0] >= 2 && next[1] >= 2 && next[2] >= 2
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	d.Stop()
	if n := inFlight.Load(); n != 0 {
		t.Errorf("%d sends still in flight after Stop", n)
	}
	mu.Lock()
	stopped := map[int]int{0: next[0], 1: next[1], 2: next[2]}
	mu.Unlock()
	for lane, n := range stopped {
		if n < 2 {
			t.Errorf("lane %d sent %d times, want at least 2", lane, n)
		}
	}
	time.Sleep(10 * time.Millisecond)
	d.Stop()
	mu.Lock()
	defer mu.Unlock()
	for lane, n := range stopped {
		if next[lane] != n {
			t.Errorf("lane %d sent after Stop (%d, then %d)", lane, n, next[lane])
		}
	}
}

// A cancelled context ends the load as Stop does.
func TestContextEndsTheLoad(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	var sent atomic.Int32
	d := pace.Start(ctx, 2, time.Millisecond, func(context.Context, int, int) { sent.Add(1) })
	cancel()
	d.Stop()
	n := sent.Load()
	time.Sleep(10 * time.Millisecond)
	if got := sent.Load(); got != n {
		t.Errorf("%d sends after the context ended", got-n)
	}
}
