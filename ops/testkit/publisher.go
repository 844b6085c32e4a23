package testkit

import (
	"context"
	"sync"
	"time"

	"oficina/streams"
)

// Publisher stands in for the API's publisher (streams.AfterCommitter): it
// vouches for every write, so nothing goes to the backlog, and remembers
// the events each committed write handed over.
type Publisher struct {
	mu     sync.Mutex
	events []streams.Recorded
}

// Track vouches for every write.
func (p *Publisher) Track(time.Time) (streams.Ticket, bool) { return 1, true }

// AfterCommit remembers the committed write's events.
func (p *Publisher) AfterCommit(_ context.Context, _ streams.Ticket, es []streams.Recorded) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, es...)
}

// Events returns what the committed writes handed over so far.
func (p *Publisher) Events() []streams.Recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]streams.Recorded(nil), p.events...)
}
