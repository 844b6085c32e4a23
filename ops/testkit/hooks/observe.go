package hooks

import (
	"fmt"
	"maps"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Requests is how many requests arrived.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Count is how many distinct webhook-ids have been answered 2xx.
func (r *Receiver) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.first)
}

// At is when the webhook-id id was first answered 2xx, at any path.
func (r *Receiver) At(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.first[id]
	return at, ok
}

// Expect returns a channel that gets the time id is first answered 2xx.
func (r *Receiver) Expect(id string) <-chan time.Time {
	c := make(chan time.Time, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if at, ok := r.first[id]; ok {
		c <- at
		return c
	}
	r.watch[id] = c
	return c
}

// Delivery is what arrived for k.
func (r *Receiver) Delivery(k Key) (Delivery, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := r.deliveries[k]; d != nil {
		return *d, true
	}
	return Delivery{}, false
}

// Deliveries copies what arrived so far, by Key.
func (r *Receiver) Deliveries() map[Key]Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[Key]Delivery, len(r.deliveries))
	for k, d := range r.deliveries {
		out[k] = *d
	}
	return out
}

// Mismatched lists the requests whose webhook-id header differs from
// their body's id ("header != body").
func (r *Receiver) Mismatched() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.mismatched...)
}

// Arrivals copies the requests so far (Options.Record).
func (r *Receiver) Arrivals() []Arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Arrival(nil), r.arrivals...)
}

// Succeeded counts the 2xx answers, all or those in [from, to) (Options.Record).
func (r *Receiver) Succeeded(from, to time.Time) int {
	n := 0
	for _, a := range r.Arrivals() {
		if a.Status/100 == 2 && !a.At.Before(from) && (to.IsZero() || a.At.Before(to)) {
			n++
		}
	}
	return n
}

// Forget drops what the receiver noted, between runs.
func (r *Receiver) Forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = 0
	r.arrivals = nil
	r.mismatched = nil
	clear(r.deliveries)
	clear(r.first)
	clear(r.watch)
	r.peak = maps.Clone(r.inflight)
}

// InFlight is what is in flight now for a path or a Group.
func (r *Receiver) InFlight(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inflight[key]
}

// Peak is the most requests ever in flight at once for a path or a Group.
func (r *Receiver) Peak(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak[key]
}

// ResetPeak restarts key's maximum from what is in flight now.
func (r *Receiver) ResetPeak(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.peak[key] = r.inflight[key]
}

// WaitFor waits until cond (called under no lock) holds, re-checking on
// every arrival and at least every 200 ms; it reports whether cond held.
func (r *Receiver) WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		changed := r.changed
		r.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-changed:
		case <-time.After(200 * time.Millisecond):
		case <-deadline.C:
			return cond()
		}
	}
}

// Verify checks a's signature against an endpoint secret ("whsec_…")
// with the Standard Webhooks library.
func Verify(secret string, a Arrival) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return fmt.Errorf("hooks: secret: %w", err)
	}
	if err := wh.Verify(a.Body, a.Header); err != nil {
		return fmt.Errorf("hooks: signature of %s: %w", a.WebhookID, err)
	}
	return nil
}
