package dispatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/streams"
	"oficina/streams/jsconfig"
)

// ConsumerName is the durable consumer of partition p.
func ConsumerName(p int) string { return fmt.Sprintf("dispatch_p%d", p) }

// partition consumes one owned partition.
type partition struct {
	d    *Dispatcher
	p    int
	hard context.Context // cancelled when the lease is lost: abort at once

	mu sync.Mutex
	g  *gate
	// held are the messages this partition holds (queued, in flight or
	// being parked), by delivery id. JetStream redelivers a message left
	// un-acked for AckWait, so held messages are kept alive (InProgress)
	// and a second message of a delivery in hand is never run (issue 15:
	// a backlog held past AckWait was sent twice).
	held map[string]heldMsg
	// chains are the held jobs of ordered endpoints, by object: one of
	// each goes through the gate at a time (order.go).
	chains map[chainRef]*chain
	// parkedUntil: when the ordered jobs this partition parked come back,
	// by delivery id, so a chain waiting for one is parked until then
	// rather than asking again every ParkDelay (order.go).
	parkedUntil map[string]time.Time
	wg          sync.WaitGroup
	stopping    bool
}

// heldMsg is a message in hand: its stream sequence tells a redelivery of
// it from another message of the same delivery.
type heldMsg struct {
	seq uint64
	msg jetstream.Msg
}

// runPartition consumes partition p until soft ends (stop pulling, hand
// queued messages back, let sends in flight finish) or hard ends (abort;
// whatever is un-acked is redelivered to the next owner after AckWait).
func (d *Dispatcher) runPartition(soft, hard context.Context, p int) error {
	cons, err := d.cfg.JS.CreateOrUpdateConsumer(hard, jsconfig.DeliveriesStream, jetstream.ConsumerConfig{
		Durable:       ConsumerName(p),
		FilterSubject: jsconfig.PartitionFilter(p),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       d.cfg.AckWait,
		MaxAckPending: d.cfg.MaxAckPending,
		MaxDeliver:    -1,
	})
	if err != nil {
		return fmt.Errorf("dispatch: consumer of partition %d: %w", p, err)
	}
	w := &partition{d: d, p: p, hard: hard, g: newGate(d.cfg), held: map[string]heldMsg{}, chains: map[chainRef]*chain{}, parkedUntil: map[string]time.Time{}}
	beat, stopBeat := context.WithCancel(hard)
	defer stopBeat()
	go w.keepAlive(beat)
	for soft.Err() == nil && hard.Err() == nil {
		// Fetch hands every message to admit, which never blocks, so no
		// message sits in a client buffer when the loop stops. Once the
		// partition holds MaxAckPending, JetStream sends no more: that is
		// the back-pressure of a healthy backlog.
		batch, err := cons.Fetch(fetchSize, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if hard.Err() != nil || soft.Err() != nil {
				break
			}
			d.cfg.Logger().Warn("dispatch: fetch", "partition", p, "err", err)
			sleepCtx(soft, 200*time.Millisecond)
			continue
		}
		behind := -1 // unknown
		for msg := range batch.Messages() {
			if md, err := msg.Metadata(); err == nil {
				behind = int(md.NumPending)
			}
			w.admit(msg)
		}
		w.makeRoom(hard, cons, behind)
	}
	w.mu.Lock()
	w.stopping = true
	var back []job
	for _, co := range w.g.companies {
		for _, ep := range co.endpoints {
			back = append(back, ep.queue...)
			co.queued -= len(ep.queue)
			ep.queue = nil
		}
	}
	for _, c := range w.chains {
		// The waiting jobs; the active one is queued (above) or in flight,
		// and its release forgets the chain.
		back = append(back, c.jobs...)
		c.jobs = nil
	}
	w.mu.Unlock()
	for _, j := range back {
		w.handBack(j)
	}
	w.wg.Wait()
	return nil
}

// headerRetry marks a delivery's scheduled retry (schedule), as opposed to
// a parked message (park), which does not carry it.
const headerRetry = "Oficina-Dispatch-Retry"

// fetchSize is the most messages one fetch asks for.
const fetchSize = 100

// makeRoom parks each company's excess over its share when the partition
// is full (a fetch would get nothing) and messages wait behind what it
// holds: they may be another company's, which would otherwise wait for
// this backlog to drain (decision 0023). behind is the consumer's count of
// messages not yet delivered after the last fetch, or -1 to ask.
func (w *partition) makeRoom(ctx context.Context, cons jetstream.Consumer, behind int) {
	w.mu.Lock()
	full := len(w.held) >= w.d.cfg.MaxAckPending-min(fetchSize, w.d.cfg.MaxAckPending/4)
	w.mu.Unlock()
	if !full {
		return
	}
	if behind < 0 {
		info, err := cons.Info(ctx)
		if err != nil {
			return
		}
		behind = int(info.NumPending)
	}
	if behind == 0 {
		return // nothing waits: the backlog in hand drains as it is
	}
	w.mu.Lock()
	park, delays := w.g.evict()
	w.mu.Unlock()
	for i, j := range park {
		w.park(j, delays[i])
	}
}

// keepAlive tells JetStream, every third of AckWait, that each held
// message is still being worked on, so none is redelivered while this
// partition holds it (queued behind the caps, in flight, being parked).
func (w *partition) keepAlive(ctx context.Context) {
	t := time.NewTicker(max(w.d.cfg.AckWait/3, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		msgs := make([]jetstream.Msg, 0, len(w.held))
		for _, h := range w.held {
			msgs = append(msgs, h.msg)
		}
		w.mu.Unlock()
		for _, m := range msgs {
			_ = m.InProgress()
		}
	}
}

// hold records msg as in hand for its delivery. It reports false for a
// message of a delivery already in hand: a redelivery of the same message
// is dropped (the holder acks it), another message of the delivery is
// acked (the holder finishes the delivery).
func (w *partition) hold(deliveryID string, msg jetstream.Msg) bool {
	var seq uint64
	if md, err := msg.Metadata(); err == nil {
		seq = md.Sequence.Stream
	}
	w.mu.Lock()
	h, inHand := w.held[deliveryID]
	if !inHand {
		w.held[deliveryID] = heldMsg{seq: seq, msg: msg}
	}
	w.mu.Unlock()
	if inHand && h.seq != seq {
		_ = msg.Ack()
	}
	return !inHand
}

// release forgets j once its message is acked, handed back, or left for
// JetStream to redeliver; when j was its object's job in the gate, the
// next of its chain goes in.
func (w *partition) release(j job) {
	w.mu.Lock()
	var next *job
	if h, ok := w.held[j.dm.DeliveryID]; ok && h.msg == j.msg {
		delete(w.held, j.dm.DeliveryID)
		next = w.leaveChain(j)
	}
	w.mu.Unlock()
	if next != nil {
		w.enter(*next)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (w *partition) admit(msg jetstream.Msg) {
	dm, err := streams.ParseDeliveryMessage(msg.Headers(), msg.Data())
	if err != nil {
		w.d.cfg.Logger().Error("dispatch: not a delivery message, dropped", "subject", msg.Subject(), "err", err)
		_ = msg.Term()
		return
	}
	if !w.hold(dm.DeliveryID, msg) {
		return
	}
	j := job{msg: msg, dm: dm, retry: msg.Headers().Get(headerRetry) != "", pre: newAhead()}
	if dm.OrderKey != "" {
		w.mu.Lock()
		delete(w.parkedUntil, dm.DeliveryID) // back
		first := w.joinChain(j)
		w.mu.Unlock()
		if !first {
			return // it waits behind its object's job in the gate
		}
	}
	w.enter(j)
}

// handBack returns j's message to JetStream for the next owner, at once
// (a Nak: not a retry).
func (w *partition) handBack(j job) {
	_ = j.msg.Nak()
	w.release(j)
}

// enter puts a held job through the gate: it starts, waits in its
// endpoint's queue or is parked. A job entering while the partition stops
// is handed back.
func (w *partition) enter(j job) {
	w.mu.Lock()
	if w.stopping {
		w.mu.Unlock()
		w.handBack(j)
		return
	}
	start, park := w.g.admit(j)
	var delay time.Duration
	if park {
		_, ep := w.g.state(j.dm.CompanyID, j.dm.EndpointID)
		delay = w.g.parkFor(ep)
	}
	w.mu.Unlock()
	switch {
	case start:
		w.run(j)
	case park:
		w.park(j, delay)
	default:
		w.prepareFront(j.dm.CompanyID, j.dm.EndpointID)
	}
}

// prepareFront prepares ahead the jobs at the front of an endpoint's
// queue that are not yet being prepared.
func (w *partition) prepareFront(company, endpointID string) {
	w.mu.Lock()
	front := w.g.front(company, endpointID, aheadDepth)
	w.mu.Unlock()
	for _, j := range front {
		j.pre.launch(w.hard, w.d, j.dm, w.wg.Go)
	}
}

func (w *partition) run(j job) {
	w.wg.Go(func() {
		freed := false
		out, err := w.d.handle(w.hard, j.dm, j.pre, func(failing bool) {
			w.mu.Lock()
			w.g.setFailing(j.dm.CompanyID, j.dm.EndpointID, failing)
			w.mu.Unlock()
		}, func(ok bool) (*streams.DeliveryMessage, *ahead) {
			// The receiver has answered: its slot goes to the next job
			// while this one's outcome is recorded (a failure leaves the
			// endpoint failing, as its record will say).
			freed = true
			w.free(j, true, ok, !ok)
			if !ok {
				return nil, nil // it stays pending: the next of its object waits
			}
			return w.nextToPrepare(j)
		})
		if err == nil && out.blocked != nil {
			w.free(j, false, false, false)
			w.blocked(j, *out.blocked)
			return
		}
		w.finish(j, out, err)
		if !freed {
			w.free(j, out.sent, out.ok, out.failing)
		}
	})
}

// free gives j's slot back to the gate and starts (or parks) what it lets
// through.
func (w *partition) free(j job, sent, ok, failing bool) {
	w.mu.Lock()
	start, park := w.g.done(j, sent, ok, failing)
	var delays []time.Duration
	for range park {
		_, ep := w.g.state(j.dm.CompanyID, j.dm.EndpointID)
		delays = append(delays, w.g.parkFor(ep))
	}
	w.mu.Unlock()
	for i, s := range start {
		w.run(s)
		// Its queue moved: new jobs are at its front (once per endpoint;
		// a company's starts are few, at most its cap).
		if !slices.ContainsFunc(start[:i], func(o job) bool { return o.dm.EndpointID == s.dm.EndpointID }) {
			w.prepareFront(s.dm.CompanyID, s.dm.EndpointID)
		}
	}
	for i, p := range park {
		w.park(p, delays[i])
	}
}

// finish acks the message, after scheduling the next attempt when there is
// one. On an error the message is parked (no attempt spent); when the lease
// is lost it is left un-acked for the next owner.
func (w *partition) finish(j job, out outcome, err error) {
	if err != nil {
		if w.hard.Err() != nil {
			w.release(j)
			return
		}
		w.d.cfg.Logger().Error("dispatch: delivery", "delivery", j.dm.DeliveryID, "err", err)
		w.park(j, w.d.cfg.ParkDelay)
		return
	}
	if !out.retryAt.IsZero() {
		if err := w.schedule(j, out.retryAt); err != nil {
			w.d.cfg.Logger().Error("dispatch: schedule retry", "delivery", j.dm.DeliveryID, "err", err)
			w.release(j) // un-acked and no longer kept alive: redelivered after AckWait
			return
		}
	}
	_ = j.msg.Ack()
	w.release(j)
}

// park sends j back after delay without spending an attempt. The
// publish is asynchronous and j is acked when the server has stored it, so
// parking a deep backlog (a failing endpoint's) costs the partition a
// stream of publishes, not a round trip each, and other companies behind
// it in the partition wait little. If the publish fails, j stays un-acked
// and comes back after AckWait.
func (w *partition) park(j job, delay time.Duration) {
	if j.dm.OrderKey != "" {
		w.noteParked(j.dm.DeliveryID, time.Now().Add(delay))
	}
	h := j.msg.Headers()
	m, err := jsconfig.RetryMsg(j.dm.CompanyID, j.dm.EndpointID, j.dm.DeliveryID, time.Now().Add(delay), h, j.msg.Data())
	if err == nil {
		// A parked retry stays a retry: it has waited its schedule, so when
		// it comes back it may probe the failing endpoint at once (still
		// one at a time) instead of waiting out the probe interval and
		// being parked again for up to FailingParkSpread. Anything else
		// parked is not a retry due.
		if !j.retry {
			m.Header.Del(headerRetry)
		}

		var f jetstream.PubAckFuture
		if f, err = w.d.cfg.JS.PublishMsgAsync(m, jetstream.WithStallWait(parkStallWait)); err == nil {
			w.wg.Go(func() {
				select {
				case <-f.Ok():
					_ = j.msg.Ack()
					w.d.cfg.Observer.Parked()
				case err := <-f.Err():
					w.d.cfg.Logger().Error("dispatch: park", "subject", j.msg.Subject(), "err", err)
				case <-w.hard.Done():
				}
				w.release(j)
			})
			return
		}
	}
	w.d.cfg.Logger().Error("dispatch: park", "subject", j.msg.Subject(), "err", err)
	w.release(j) // un-acked and no longer kept alive: redelivered after AckWait
}

// parkStallWait is how long a park waits for room when the connection
// has its most asynchronous publishes outstanding (a long chain parked
// whole, a failing endpoint's backlog): the park waits, slowing whoever
// parks, instead of failing and leaving the message to come back after
// AckWait (the client's default wait, 200 ms, failed hundreds of parks at
// once in the ordered bench).
const parkStallWait = 10 * time.Second

func (w *partition) schedule(j job, at time.Time) error {
	h := j.msg.Headers()
	m, err := jsconfig.RetryMsg(j.dm.CompanyID, j.dm.EndpointID, j.dm.DeliveryID, at, h, j.msg.Data())
	if err != nil {
		return err
	}
	m.Header.Set(headerRetry, "1")
	ctx, cancel := context.WithTimeout(w.hard, 10*time.Second)
	defer cancel()
	if _, err := w.d.cfg.JS.PublishMsg(ctx, m); err != nil {
		return errors.Join(errors.New("publish schedule"), err)
	}
	return nil
}
