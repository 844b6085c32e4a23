package bench

import (
	"context"
	"fmt"
	"time"

	"oficina/streams/jsconfig"
)

// streamState is what DELIVERIES holds, read from the server without
// touching the dispatcher: msgs is every stored message, held what its
// consumers have yet to deliver or have in hand (pending + ack pending).
// DELIVERIES is a work queue, so a delivery leaves it when acked; what is
// stored and on no consumer's books is a scheduled message — a parked
// delivery or a retry waiting for its time (docs/dispatch.md).
type streamState struct{ msgs, held uint64 }

// parked estimates the scheduled messages. The two reads are a few
// milliseconds apart, so under load it is off by what was published
// meanwhile.
func (s streamState) parked() uint64 {
	if s.msgs < s.held {
		return 0
	}
	return s.msgs - s.held
}

// deliveriesState reads DELIVERIES' consumers, then the stream: two API
// requests, whatever the number of partitions.
func (f *Feed) deliveriesState(ctx context.Context) (streamState, error) {
	st, err := f.JS.Stream(ctx, jsconfig.DeliveriesStream)
	if err != nil {
		return streamState{}, fmt.Errorf("bench: stream: %w", err)
	}
	var s streamState
	cs := st.ListConsumers(ctx)
	for ci := range cs.Info() {
		s.held += ci.NumPending + uint64(ci.NumAckPending)
	}
	if err := cs.Err(); err != nil {
		return streamState{}, fmt.Errorf("bench: consumers: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return streamState{}, fmt.Errorf("bench: stream: %w", err)
	}
	s.msgs = info.State.Msgs
	return s, nil
}

// Quiesce waits until DELIVERIES is empty — every delivery sent, nothing
// parked or scheduled — so a scenario does not measure the tail of the one
// before it. It returns how long it waited and whether the stream emptied
// within limit.
func (f *Feed) Quiesce(ctx context.Context, limit time.Duration) (time.Duration, bool, error) {
	start := time.Now()
	for {
		s, err := f.deliveriesState(ctx)
		if err != nil {
			return time.Since(start), false, err
		}
		if s.msgs == 0 {
			return time.Since(start), true, nil
		}
		if time.Since(start) > limit {
			return time.Since(start), false, nil
		}
		select {
		case <-ctx.Done():
			return time.Since(start), false, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// sampleParked reads the parked count and the backlog every interval until
// ctx ends and returns their maxima.
func (f *Feed) sampleParked(ctx context.Context, every time.Duration) (parked, backlog uint64) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if s, err := f.deliveriesState(ctx); err == nil {
			parked, backlog = max(parked, s.parked()), max(backlog, s.held)
		}
		select {
		case <-ctx.Done():
			return parked, backlog
		case <-t.C:
		}
	}
}
