package dispatch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch/destguard"
	"oficina/schema/ids"
	"oficina/streams/jsconfig"
)

// Outcomes of a delivery message, a fixed set so metrics stay bounded:
// what an attempt got, or why the delivery was closed without one.
const (
	OutcomeSucceeded          = "succeeded"           // a 2xx
	OutcomeFailedStatus       = "failed_status"       // any other status (3xx included: redirects are not followed)
	OutcomeTimeout            = "timeout"             // no answer in time
	OutcomeTLSError           = "tls_error"           // the receiver's certificate or handshake
	OutcomeDestinationRefused = "destination_refused" // the destination guard refused the address
	OutcomeRequestFailed      = "request_failed"      // no answer otherwise: DNS, connection refused or reset, a secret that does not open
	// Closed without an attempt.
	OutcomeSubscriberAccessLost = ErrSubscriberAccessLost
	OutcomePlanWithoutAPI       = ErrPlanWithoutAPI
	OutcomeEndpointDisabled     = ErrEndpointDisabled
)

// Outcomes lists every outcome, attempts first.
var Outcomes = []string{OutcomeSucceeded, OutcomeFailedStatus, OutcomeTimeout, OutcomeTLSError,
	OutcomeDestinationRefused, OutcomeRequestFailed, OutcomeSubscriberAccessLost, OutcomePlanWithoutAPI, OutcomeEndpointDisabled}

// Attempt is one finished attempt as an Observer sees it.
type Attempt struct {
	Outcome string // one of the attempt outcomes
	Status  int    // the receiver's status; 0 without an answer
	// Duration is the request's, from sending to the answer (or giving up).
	Duration time.Duration
	// SinceRecorded is, for a success, the time from the delivery's
	// recording (its write's transaction) to the receiver's answer,
	// retries included; 0 when unknown or for a failure.
	SinceRecorded time.Duration
}

// Observer is told what the dispatcher does, for metrics (ops/metrics
// implements it). Its methods are called from many goroutines and must
// not block.
type Observer interface {
	// Attempted: an attempt finished (the send; its record follows).
	Attempted(Attempt)
	// Closed: a delivery was closed without an attempt (outcome is
	// OutcomeSubscriberAccessLost, OutcomePlanWithoutAPI or
	// OutcomeEndpointDisabled).
	Closed(outcome string)
	// GaveUp: a delivery failed for good after an attempt (attempts
	// exhausted, or its endpoint disabled).
	GaveUp()
	// EndpointDisabled: an endpoint was disabled after failing for
	// Config.DisableAfter.
	EndpointDisabled()
	// Parked: a message was sent back to wait, no attempt spent (its
	// endpoint or company at its cap, or failing).
	Parked()
}

// nopObserver is the Observer of a Config without one.
type nopObserver struct{}

func (nopObserver) Attempted(Attempt) {}
func (nopObserver) Closed(string)     {}
func (nopObserver) GaveUp()           {}
func (nopObserver) EndpointDisabled() {}
func (nopObserver) Parked()           {}

// attemptOutcome classifies r into one of the attempt outcomes.
func attemptOutcome(r attemptResult) string {
	switch {
	case r.ok():
		return OutcomeSucceeded
	case r.status != 0:
		return OutcomeFailedStatus
	}
	word, _, _ := strings.Cut(r.err, ":")
	switch word {
	case "timeout":
		return OutcomeTimeout
	case "tls_error":
		return OutcomeTLSError
	case "destination_refused", destguard.ReasonInvalidURL:
		return OutcomeDestinationRefused
	}
	return OutcomeRequestFailed
}

// observeAttempt tells the observer about an attempt of the delivery
// that took took and got r, finished at done.
func (d *Dispatcher) observeAttempt(deliveryID string, r attemptResult, took time.Duration, done time.Time) {
	a := Attempt{Outcome: attemptOutcome(r), Status: r.status, Duration: took}
	if a.Outcome == OutcomeSucceeded {
		// A delivery id carries its creation time: the write's
		// transaction recorded it (a resend's, when it was asked for).
		if at, ok := ids.Time(deliveryID); ok {
			a.SinceRecorded = max(done.Sub(at), 0)
		}
	}
	d.cfg.Observer.Attempted(a)
}

// Partitions is the number of DELIVERIES partitions the dispatchers share.
func (d *Dispatcher) Partitions() int { return d.cfg.Partitions }

// PartitionBacklog is what waits in one DELIVERIES partition.
type PartitionBacklog struct {
	Partition int
	// Pending: messages not yet handed to a dispatcher (first attempts,
	// fired retries, parked messages come back).
	Pending uint64
	// AckPending: messages handed out and not yet acknowledged (queued
	// behind the caps or in flight).
	AckPending int
}

// Backlog reads, from JetStream, the backlog of each partition this
// dispatcher owns (one consumer info request each).
func (d *Dispatcher) Backlog(ctx context.Context) ([]PartitionBacklog, error) {
	var out []PartitionBacklog
	for _, p := range d.Owned() {
		c, err := d.cfg.JS.Consumer(ctx, jsconfig.DeliveriesStream, ConsumerName(p))
		if err != nil {
			return out, fmt.Errorf("dispatch: backlog of partition %d: %w", p, err)
		}
		info := c.CachedInfo()
		out = append(out, PartitionBacklog{Partition: p, Pending: info.NumPending, AckPending: info.NumAckPending})
	}
	return out, nil
}

// PastDue is how many pending deliveries have a scheduled retry due before
// now, across every company, and the earliest such time (zero when none).
// A failing endpoint's retries stay past due while it is probed one
// delivery at a time (docs/dispatch.md); a growing count with attempts
// stalled means retries are not firing.
func PastDue(ctx context.Context, db bun.IDB, now time.Time) (int64, time.Time, error) {
	var row struct {
		Due    int64      `bun:"due"`
		Oldest *time.Time `bun:"oldest"`
	}
	if err := db.NewRaw("SELECT * FROM oficina_retries_past_due(?)", now).Scan(ctx, &row); err != nil {
		return 0, time.Time{}, fmt.Errorf("dispatch: retries past due: %w", err)
	}
	if row.Oldest == nil {
		return row.Due, time.Time{}, nil
	}
	return row.Due, *row.Oldest, nil
}
