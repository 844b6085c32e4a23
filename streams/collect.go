package streams

import (
	"context"
	"sync"
)

type collectorKey struct{}

type collector struct {
	mu     sync.Mutex
	events []Recorded
}

// Collect returns a context in which Record also remembers what it stored,
// and a function returning those events; the transport calls it after commit
// to publish at once (the relay covers a crash in between).
func Collect(ctx context.Context) (context.Context, func() []Recorded) {
	c := &collector{}
	return context.WithValue(ctx, collectorKey{}, c), func() []Recorded {
		c.mu.Lock()
		defer c.mu.Unlock()
		return append([]Recorded(nil), c.events...)
	}
}

func collect(ctx context.Context, rs []Recorded) {
	if c, ok := ctx.Value(collectorKey{}).(*collector); ok {
		c.mu.Lock()
		c.events = append(c.events, rs...)
		c.mu.Unlock()
	}
}
