package streams

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"oficina/tenant"
)

// Write is one write unit: the company transaction it runs in, who makes
// it, its clocks, and the events it records. Run builds one per write and
// hands it down to the records' rules; Record, Ping and Resend append to
// it, and Run publishes what it holds once the transaction has committed.
// Nothing travels back up through a context.
type Write struct {
	// Tx is the company transaction (row-level security scoped to
	// CompanyID). Set by Run; a test may build a Write around its own.
	Tx        bun.Tx
	CompanyID string
	Actor     Actor
	// At is the business clock's reading: when the fact happened (the
	// events' occurred_at, the records' timestamps).
	At time.Time
	// Wall reads the wall clock, for bookkeeping rows (outbox created_at);
	// nil: time.Now.
	Wall func() time.Time

	events []Recorded
	// last holds statements to send with COMMIT; atCommit says Run will
	// send them (a Write built around a test's own Tx runs them at once).
	last     []string
	atCommit bool
	// tracked says a publisher vouches for the write's events (it publishes
	// them after commit, or puts them in the backlog, or its lost window
	// covers them); otherwise the write puts them in the backlog itself,
	// for the relay (decision 0029).
	tracked bool
}

// Events returns what the write recorded so far.
func (w *Write) Events() []Recorded { return w.events }

// Discard forgets the events recorded so far and the statements waiting for
// COMMIT: the caller rolled back what wrote them (an idempotent request's
// error answer keeps only its record).
func (w *Write) Discard() { w.events, w.last = nil, nil }

// Later has q run at the end of the write, in COMMIT's message: for a
// statement whose result the write does not read and that nothing later in
// the write reads back (the last row a write inserts, an idempotency
// record), so it costs no round trip. Its error fails the write at commit
// (the transaction rolls back and Run returns the error). Outside Run, q
// runs at once in the write's transaction.
func (w *Write) Later(ctx context.Context, q schema.QueryAppender) error {
	b, err := q.AppendQuery(schema.NewQueryGen(w.Tx.Dialect()), nil)
	if err != nil {
		return fmt.Errorf("streams: later: %w", err)
	}
	if !w.atCommit {
		if _, err := w.Tx.ExecContext(ctx, string(b)); err != nil {
			return fmt.Errorf("streams: later: %w", err)
		}
		return nil
	}
	w.last = append(w.last, string(b))
	return nil
}

// add keeps rs for publishing after commit and, when no publisher vouches
// for the write, puts them in the backlog with the write.
func (w *Write) add(ctx context.Context, rs ...Recorded) error {
	w.events = append(w.events, rs...)
	if w.tracked {
		return nil
	}
	return w.Later(ctx, addToBacklog(w.Tx, entries(rs)))
}

func (w *Write) wall() time.Time {
	if w.Wall != nil {
		return w.Wall()
	}
	return time.Now()
}

// AfterCommitter publishes the events of a committed write (the
// Publisher; the relay covers what it does not).
type AfterCommitter interface {
	// Track is told a write is about to stamp its rows, at or after at
	// on the write's wall clock. ok false: the publisher cannot vouch for
	// them (not yet heard by the database), so the write puts its events
	// in the backlog itself.
	Track(at time.Time) (t Ticket, ok bool)
	// AfterCommit publishes the events of the committed write t, or
	// releases t when events is empty (nothing recorded, or rolled back).
	AfterCommit(ctx context.Context, t Ticket, events []Recorded)
}

// Ticket is a write a publisher tracks, from before its rows are stamped
// until they are published or in the backlog.
type Ticket uint64

// Writer runs write units: transaction, rules, commit, publish. The public
// API, the admin API, the portal and the workers all write through it.
type Writer struct {
	DB *bun.DB
	// Publisher publishes after commit; nil leaves the events to the relay.
	Publisher AfterCommitter
	// Now is the business clock; nil: time.Now.
	Now func() time.Time
	// Wall is the wall clock; nil: time.Now.
	Wall func() time.Time
}

// Unit describes one write to run.
type Unit struct {
	CompanyID string
	Actor     Actor
	// First is a complete statement sent with BEGIN (tenant.TxWith): one
	// that may refuse the whole write, such as an idempotency claim.
	First string
	// At, when set, is when the write happens on the business clock (a
	// routine's run time); zero: the writer's clock now.
	At time.Time
}

// Run runs fn as one write unit: in u's company transaction, with a Write
// that fn's rules record their events on; after commit it publishes those
// events. fn's error rolls everything back and is Run's error.
func (wr *Writer) Run(ctx context.Context, u Unit, fn func(ctx context.Context, w *Write) error) error {
	w := &Write{CompanyID: u.CompanyID, Actor: u.Actor, At: u.At, Wall: wr.Wall, atCommit: true}
	if w.At.IsZero() {
		w.At = read(wr.Now)
	}
	var ticket Ticket
	if wr.Publisher != nil {
		ticket, w.tracked = wr.Publisher.Track(w.wall())
	}
	err := tenant.TxAround(ctx, wr.DB, u.CompanyID, u.First, func(ctx context.Context, tx bun.Tx) (string, error) {
		w.Tx = tx
		if err := fn(ctx, w); err != nil {
			return "", err
		}
		return strings.Join(w.last, ";\n"), nil
	})
	if wr.Publisher != nil {
		events := w.events
		if err != nil {
			events = nil
		}
		wr.Publisher.AfterCommit(context.WithoutCancel(ctx), ticket, events)
	}
	return err
}

func read(clock func() time.Time) time.Time {
	if clock != nil {
		return clock()
	}
	return time.Now()
}
