package streams

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/schema/ids"
	"oficina/schema/service"
)

// Publish bounds.
const (
	// DefaultPublishTimeout bounds how long the acknowledgements of one
	// write are awaited in the background; what is not acknowledged by
	// then goes to the backlog, for the relay.
	DefaultPublishTimeout = 5 * time.Second
	// maxOutstanding is how many messages may await their
	// acknowledgement before further writes leave theirs to the relay at
	// once: NATS that accepts but does not answer would otherwise fill
	// memory, and at the client's own cap a publish blocks. 8,000 holds
	// about a second of a busy API's messages (make bench's recorders hit
	// 2,000 at 5,000 deliveries a second) in ~10 MB of bodies.
	maxOutstanding = 8000
	// PublishAsyncMaxPending is the JetStream client's own cap on
	// publishes awaiting their acknowledgement (jetstream.New's
	// WithPublishAsyncMaxPending; its default, 4,000, is below
	// maxOutstanding): give it to the client the Publisher uses.
	PublishAsyncMaxPending = 2 * maxOutstanding
	// DefaultBeat is how often a publisher tells the database its low
	// watermark; DefaultLostAfter is how long the relay waits for a beat
	// before it takes the publisher for lost (decision 0029).
	DefaultBeat      = time.Second
	DefaultLostAfter = 15 * time.Second
	// DefaultStopWait bounds how long a stopping publisher waits for the
	// writes it tracks; what is still in flight then is left to the
	// relay's hand-over of lost publishers.
	DefaultStopWait = 10 * time.Second
)

// Publisher publishes what a committed write recorded, right after commit:
// each event on EVENTS and each delivery on DELIVERIES, with Nats-Msg-Id =
// event id / delivery id, so a message sent twice is dropped by
// JetStream's duplicate window.
//
// No row is marked published (decision 0029). A write does not wait on
// NATS (decision 0022): AfterCommit hands the messages to the client and
// returns; their acknowledgements are awaited in the background, and only
// what is not acknowledged costs a database write — its ids go to
// publish_backlog, which the Relay publishes. A crash is covered by the
// low watermark Run tells the database every second: every write this
// process stamped before it is published or in the backlog. When the beats
// stop, the relay puts everything recorded since the last watermark in the
// backlog (oficina_publishers_lost).
type Publisher struct {
	// Base: the logger and the wall clock of the beats.
	service.Base
	db      *bun.DB
	js      jetstream.JetStream
	timeout time.Duration
	// id names this publisher's row in publishers.
	id string
	// left says writes are leaving their events to the relay (NATS
	// unreachable), so that is logged once per outage, not per write.
	left atomic.Bool

	// Failed, when set, is told each AfterCommit that left some of its
	// messages to the relay, and why (one of the Publish* reasons); set it
	// before the publisher is used.
	Failed func(reason string)
	// Beat is how often Run beats; 0: DefaultBeat.
	Beat time.Duration
	// StopWait bounds how long Run, stopping, waits for the writes in
	// flight; 0: DefaultStopWait.
	StopWait time.Duration

	// live says the database has this publisher's row: Track vouches for
	// writes only then.
	live atomic.Bool
	// The writes tracked and not yet settled, by ticket, with the wall
	// time each was tracked at; since is the earliest time tracked since
	// the last beat (a write's clock may lag the beat's).
	mu      sync.Mutex
	next    Ticket
	pending map[Ticket]time.Time
	since   time.Time
	// quit ends the retries of backlog writes when Run stops.
	quit     chan struct{}
	quitOnce sync.Once
	// busy counts the background work in progress (Wait).
	busy sync.WaitGroup
}

// Why an AfterCommit left messages to the relay (Publisher.Failed).
const (
	PublishDisconnected = "disconnected" // NATS out of reach: nothing was sent
	PublishBackpressure = "backpressure" // too many acknowledgements outstanding
	PublishError        = "error"        // a publish failed or was not acknowledged
)

// NewPublisher returns a publisher over db (the app pool) and js. It
// vouches for writes once Run has told the database it exists; before
// that, and without Run, writes put their events in the backlog
// themselves.
func NewPublisher(db *bun.DB, js jetstream.JetStream, log *slog.Logger) *Publisher {
	return &Publisher{Base: service.Base{Log: log}, db: db, js: js, timeout: DefaultPublishTimeout,
		id: ids.New("pub"), pending: map[Ticket]time.Time{}, quit: make(chan struct{})}
}

// Track implements AfterCommitter.
func (p *Publisher) Track(at time.Time) (Ticket, bool) {
	if !p.live.Load() {
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	p.pending[p.next] = at
	if p.since.IsZero() || at.Before(p.since) {
		p.since = at
	}
	return p.next, true
}

// Vouching reports whether the publisher vouches for new writes: Run has
// told the database it exists and has not stopped.
func (p *Publisher) Vouching() bool { return p.live.Load() }

// release forgets t: its events are on NATS or in the backlog.
func (p *Publisher) release(t Ticket) {
	if t == 0 {
		return
	}
	p.mu.Lock()
	delete(p.pending, t)
	p.mu.Unlock()
}

// AfterCommit publishes rs without waiting for JetStream; it implements
// AfterCommitter.
func (p *Publisher) AfterCommit(ctx context.Context, t Ticket, rs []Recorded) {
	if len(rs) == 0 {
		p.release(t)
		return
	}
	if p.disconnected() {
		p.failed(PublishDisconnected)
		p.leave(ctx, ErrDisconnected)
		p.backlog(t, entries(rs))
		return
	}
	if p.js.PublishAsyncPending() >= maxOutstanding {
		p.failed(PublishBackpressure)
		p.leave(ctx, errTooManyOutstanding)
		p.backlog(t, entries(rs))
		return
	}
	msgs, err := messages(rs)
	if err != nil {
		p.failed(PublishError)
		p.Logger().ErrorContext(ctx, "events: publish after commit", "error", err)
		p.backlog(t, entries(rs))
		return
	}
	b := startPublish(p.js, msgs)
	p.busy.Add(1)
	go func() {
		defer p.busy.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
		defer cancel()
		if !b.await(ctx) {
			b.errs = append(b.errs, fmt.Errorf("streams: publish: %w", ctx.Err()))
		}
		p.settle(ctx, t, b)
	}()
}

// Wait returns once every publish handed to AfterCommit so far is settled
// (acknowledged, or in the backlog): shutdown calls it before closing the
// pool, and tests before reading JetStream or the backlog.
func (p *Publisher) Wait() { p.busy.Wait() }

// settle releases t when JetStream has every message of b, and otherwise
// puts the rest in the backlog first.
func (p *Publisher) settle(ctx context.Context, t Ticket, b *inflight) {
	err := errors.Join(b.errs...)
	if err == nil {
		p.release(t)
		if p.left.CompareAndSwap(true, false) {
			p.Logger().InfoContext(ctx, "events: published after commit again")
		}
		return
	}
	p.failed(PublishError)
	if len(b.acked) == 0 {
		p.leave(ctx, err)
	} else {
		p.Logger().WarnContext(ctx, "events: publish after commit failed in part; the relay will retry", "error", err)
	}
	var rest []BacklogEntry
	for _, m := range b.unacked() {
		rest = append(rest, m.entry)
	}
	p.backlogNow(t, rest)
}

// backlog puts es in the backlog in the background, then releases t.
func (p *Publisher) backlog(t Ticket, es []BacklogEntry) {
	p.busy.Add(1)
	go func() {
		defer p.busy.Done()
		p.backlogNow(t, es)
	}()
}

// backlogNow writes es to the backlog, retrying until it succeeds or the
// publisher stops, and then releases t. Until then t holds the low
// watermark back, so a crash leaves es to the relay's hand-over.
func (p *Publisher) backlogNow(t Ticket, es []BacklogEntry) {
	wait := 100 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
		err := Backlog(ctx, p.db, es)
		cancel()
		if err == nil {
			p.release(t)
			return
		}
		p.Logger().Warn("events: could not put unpublished events in the backlog; retrying", "error", err)
		select {
		case <-p.quit:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// leave notes that a write's events are left to the relay, once per
// outage in the log.
func (p *Publisher) leave(ctx context.Context, err error) {
	if !p.left.Swap(true) {
		p.Logger().WarnContext(ctx, "events: not published after commit; the relay publishes them once NATS answers", "error", err)
	}
}

func (p *Publisher) failed(reason string) {
	if p.Failed != nil {
		p.Failed(reason)
	}
}

func (p *Publisher) disconnected() bool {
	nc := p.js.Conn()
	return nc != nil && !nc.IsConnected()
}

// ErrDisconnected is returned by Publish while NATS is unreachable: the
// write's answer is not held up waiting for it; the relay publishes later.
var ErrDisconnected = errors.New("streams: NATS disconnected")

var errTooManyOutstanding = errors.New("streams: too many publishes awaiting their acknowledgement")

// Publish sends rs, recorded by a write no publisher tracked (so in the
// backlog), and deletes from the backlog what JetStream acknowledged.
func (p *Publisher) Publish(ctx context.Context, rs []Recorded) error {
	if p.disconnected() {
		return ErrDisconnected
	}
	msgs, err := messages(rs)
	if err != nil {
		return err
	}
	acked, pubErr := publishAll(ctx, p.js, msgs)
	es := make([]BacklogEntry, len(acked))
	for i, m := range acked {
		es[i] = m.entry
	}
	return errors.Join(Unbacklog(ctx, p.db, es), pubErr)
}

// Run tells the database this publisher's low watermark every Beat until
// ctx ends; then it stops vouching for new writes, waits (a while) for
// those in flight, and removes its row when none is left — otherwise the
// relay hands what is left over once the beats have stopped for
// DefaultLostAfter.
func (p *Publisher) Run(ctx context.Context) error {
	every := p.Beat
	if every <= 0 {
		every = DefaultBeat
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := p.beat(ctx, false); err != nil && ctx.Err() == nil {
			p.Logger().WarnContext(ctx, "events: publisher heartbeat", "error", err)
		}
		select {
		case <-ctx.Done():
			return p.stop()
		case <-t.C:
		}
	}
}

// beat tells the database the low watermark, or that the publisher is
// gone.
func (p *Publisher) beat(ctx context.Context, gone bool) error {
	now := p.WallNow()
	p.mu.Lock()
	low := now
	if !p.since.IsZero() && p.since.Before(low) {
		low = p.since
	}
	for _, at := range p.pending {
		if at.Before(low) {
			low = at
		}
	}
	since := p.since
	p.since = time.Time{}
	p.mu.Unlock()
	var existed bool
	err := p.db.NewRaw("SELECT oficina_publisher_beat(?, ?, ?, ?)", p.id, low, now, gone).Scan(ctx, &existed)
	if err != nil {
		// The writes tracked since the last beat are not covered yet.
		p.mu.Lock()
		if !since.IsZero() && (p.since.IsZero() || since.Before(p.since)) {
			p.since = since
		}
		p.mu.Unlock()
		return fmt.Errorf("streams: publisher beat: %w", err)
	}
	if !gone {
		if p.live.Swap(true) && !existed {
			p.Logger().WarnContext(ctx, "events: the relay took this publisher for lost (beats late); it has republished its window", "publisher", p.id)
		}
	}
	return nil
}

// stop ends Run: no new write is vouched for, the tracked ones settle (for
// StopWait at most), and the row goes when nothing is left in flight.
func (p *Publisher) stop() error {
	p.live.Store(false)
	deadline := time.Now().Add(cmp.Or(p.StopWait, DefaultStopWait))
	for p.inFlight() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	p.quitOnce.Do(func() { close(p.quit) })
	p.Wait()
	if n := p.inFlight(); n > 0 {
		p.Logger().Warn("events: stopping with writes not published; the relay will publish them", "writes", n)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	return p.beat(ctx, true)
}

func (p *Publisher) inFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}

// inflight is a set of messages published asynchronously, awaited in one
// or more steps.
type inflight struct {
	msgs    []outMsg
	futures []jetstream.PubAckFuture
	next    int // futures before next are settled
	acked   []outMsg
	errs    []error
}

// startPublish publishes msgs asynchronously. A client with too many
// acknowledgements outstanding refuses at once instead of stalling.
func startPublish(js jetstream.JetStream, msgs []outMsg) *inflight {
	b := &inflight{msgs: msgs, futures: make([]jetstream.PubAckFuture, len(msgs)), acked: make([]outMsg, 0, len(msgs))}
	for i, m := range msgs {
		f, err := js.PublishMsgAsync(m.msg, jetstream.WithStallWait(time.Millisecond))
		if err != nil {
			b.errs = append(b.errs, fmt.Errorf("streams: publish %s: %w", m.msg.Subject, err))
			continue
		}
		b.futures[i] = f
	}
	return b
}

// await waits until every message is acknowledged or refused, or ctx
// ends; it says whether every one is settled.
func (b *inflight) await(ctx context.Context) bool {
	for ; b.next < len(b.futures); b.next++ {
		f := b.futures[b.next]
		if f == nil {
			continue
		}
		select {
		case <-f.Ok():
			b.acked = append(b.acked, b.msgs[b.next])
		case err := <-f.Err():
			b.errs = append(b.errs, fmt.Errorf("streams: publish %s: %w", b.msgs[b.next].msg.Subject, err))
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// publishAll publishes msgs asynchronously and waits for every ack; it
// returns the acknowledged ones (a duplicate counts: JetStream has it).
func publishAll(ctx context.Context, js jetstream.JetStream, msgs []outMsg) ([]outMsg, error) {
	b := startPublish(js, msgs)
	if !b.await(ctx) {
		b.errs = append(b.errs, fmt.Errorf("streams: publish: %w", ctx.Err()))
	}
	return b.acked, errors.Join(b.errs...)
}

// unacked lists the messages of b that JetStream did not acknowledge.
func (b *inflight) unacked() []outMsg {
	done := make(map[*nats.Msg]bool, len(b.acked))
	for _, m := range b.acked {
		done[m.msg] = true
	}
	var out []outMsg
	for _, m := range b.msgs {
		if !done[m.msg] {
			out = append(out, m)
		}
	}
	return out
}
