package hostile

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// speed measures GET /me answers per second with SpeedWorkers clients for
// window; errs counts requests that failed or were not 200.
func (r *run) speed(ctx context.Context, window time.Duration) (perSecond float64, errs int) {
	ctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	var ok, bad atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range r.t.SpeedWorkers {
		wg.Go(func() {
			for ctx.Err() == nil {
				a, err := r.c.public(ctx, http.MethodGet, "/me", r.a.Key, nil)
				switch {
				case ctx.Err() != nil:
				case err != nil || a.Status != http.StatusOK:
					bad.Add(1)
				default:
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds(), int(bad.Load())
}

// throttle proves the per-address throttle of authentication failures
// (spec 5 item 3) from an address of its own: failures are 401 until the
// ceiling, then 429 with Retry-After; the run's other addresses and valid
// keys are not affected.
func (r *run) throttle(ctx context.Context) {
	src, ok := r.src.fresh()
	if !ok {
		r.note("throttle case skipped: no loopback address of its own to send from")
		return
	}
	for i := 1; i <= 25; i++ {
		req := jsonRequest(http.MethodGet, Prefix+"/me", "ofk_hostile_throttle", nil)
		req.Source = src
		k := &kase{Category: "authorization_throttle", Name: fmt.Sprintf("bad key #%d from %s", i, src), Req: req,
			Expect: expect{Codes: []string{"api_key_invalid", "rate_limit_exceeded"}, Any: []int{401, 429}, Refuse: true}}
		a, err := r.c.send(ctx, r.c.base, req)
		var bar, other []string
		if err != nil {
			bar = []string{"no answer: " + err.Error()}
		} else {
			bar, other = judge(k, a)
			if i > 21 && a.Status != http.StatusTooManyRequests {
				other = append(other, fmt.Sprintf("failure #%d still answered %d: no throttle", i, a.Status))
			}
		}
		r.record(k, a, bar, other)
	}
	k := &kase{Category: "authorization_throttle", Name: "valid key from the usual address after the throttle", Legit: true,
		Req: jsonRequest(http.MethodGet, Prefix+"/me", r.a.Key, nil), Expect: expect{Status: 200}}
	a, err := r.c.send(ctx, r.c.base, k.Req)
	var bar, other []string
	if err != nil {
		bar = []string{"no answer: " + err.Error()}
	} else {
		bar, other = judge(k, a)
	}
	r.record(k, a, bar, other)
}
