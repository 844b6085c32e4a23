package chaos

import (
	"context"
	"fmt"
	"net/http"
	"oficina/ops/proving/pace"
	"slices"
	"sync"
	"time"
)

// The limited company: a small ceiling, offered twice as much, so that
// in every minute its budget fills for about half of it (requests allowed
// one a second) and is full for the other half (refused) — whichever a NATS
// restart falls into, the API processes then decide by their shares, and
// a request allowed beyond the ceiling shows.
const (
	limitedCeiling = 30 // requests a minute
	limitedEvery   = time.Second
	limitWindow    = time.Minute // the spec's sliding window
)

// limitProbe sends the limited company's requests, one at a time (so the
// order they were counted in is the order they were sent), alternating
// between the API processes.
type limitProbe struct {
	co     company
	driver *pace.Driver

	mu  sync.Mutex
	got []limitAnswer
}

type limitAnswer struct {
	sent, answered time.Time
	status         int // 0: no answer
	headers        bool
}

func startLimitProbe(ctx context.Context, a *api, bases []string, co company) *limitProbe {
	p := &limitProbe{co: co}
	p.driver = pace.Start(ctx, 1, limitedEvery, func(ctx context.Context, _, n int) {
		sent := time.Now()
		ans, err := a.lead(ctx, bases[n%len(bases)], co, n)
		la := limitAnswer{sent: sent, answered: time.Now()}
		if err == nil {
			la.status, la.headers = ans.status, ans.header.Get("RateLimit-Limit") != ""
		}
		p.mu.Lock()
		p.got = append(p.got, la)
		p.mu.Unlock()
	})
	return p
}

func (p *limitProbe) stop() []limitAnswer {
	p.driver.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got
}

// LimitFigures are the limited company's answers.
type LimitFigures struct {
	Ceiling int // requests a minute
	Sent    int
	Allowed int            // 201
	Refused int            // 429
	Other   map[string]int // other statuses and errors
	// NoHeaders counts 201 and 429 answers without RateLimit-Limit.
	NoHeaders int
	// Over counts allowed requests beyond the ceiling: request j is over
	// when it and the Ceiling allowed before it certainly fell within one
	// window (j answered less than a window after request j-Ceiling was
	// sent). OverDuringNATS are those answered during a NATS restart or
	// the window after it.
	Over, OverDuringNATS int
	FirstOver            string
	// AllowedDuringNATS and RefusedDuringNATS are the answers given while
	// NATS was down or the 2 s after (by the processes' shares).
	AllowedDuringNATS, RefusedDuringNATS int
}

// limitFigures tallies the probe's answers against the faults.
func limitFigures(got []limitAnswer, faults []Fault, loadStart time.Time) LimitFigures {
	f := LimitFigures{Ceiling: limitedCeiling, Sent: len(got), Other: map[string]int{}}
	var allowed []limitAnswer
	for _, a := range got {
		switch a.status {
		case http.StatusCreated:
			f.Allowed++
			allowed = append(allowed, a)
		case http.StatusTooManyRequests:
			f.Refused++
		case 0:
			f.Other["no answer"]++
		default:
			f.Other[fmt.Sprint(a.status)]++
		}
		if (a.status == http.StatusCreated || a.status == http.StatusTooManyRequests) && !a.headers {
			f.NoHeaders++
		}
		at := a.answered.Sub(loadStart)
		for _, flt := range faults {
			if flt.Kind == FaultNATS && at >= flt.At && at <= flt.Up+2*time.Second {
				switch a.status {
				case http.StatusCreated:
					f.AllowedDuringNATS++
				case http.StatusTooManyRequests:
					f.RefusedDuringNATS++
				}
			}
		}
	}
	for j := limitedCeiling; j < len(allowed); j++ {
		first := allowed[j-limitedCeiling]
		if allowed[j].answered.Sub(first.sent) >= limitWindow {
			continue
		}
		f.Over++
		at := allowed[j].answered.Sub(loadStart)
		for _, flt := range faults {
			if flt.Kind == FaultNATS && at >= flt.At && at <= flt.Up+limitWindow {
				f.OverDuringNATS++
				break
			}
		}
		if f.FirstOver == "" {
			f.FirstOver = fmt.Sprintf("allowed at +%.1fs, %d allowed since +%.1fs", at.Seconds(), limitedCeiling+1,
				first.sent.Sub(loadStart).Seconds())
		}
	}
	return f
}

// LatencyFigures compare the writes' answer times while NATS restarts with
// steady running.
type LatencyFigures struct {
	// Steady: writes sent outside every fault on the write path — API,
	// NATS and PostgreSQL, from 1 s before one is injected to 2 s after
	// its part is back (a relay or dispatcher down leaves writes alone).
	SteadyN              int
	SteadyP50, SteadyP99 time.Duration
	// NATS: writes sent while NATS was down and the 2 s after it was back
	// (the API processes reconnect meanwhile).
	NATSN            int
	NATSP50, NATSP99 time.Duration
}

// Ratio is NATS p99 over steady p99 (0 without samples).
func (l LatencyFigures) Ratio() float64 {
	if l.SteadyP99 <= 0 || l.NATSN == 0 {
		return 0
	}
	return float64(l.NATSP99) / float64(l.SteadyP99)
}

func latencyFigures(ls []Latency, faults []Fault, loadStart time.Time) LatencyFigures {
	var steady, nats []time.Duration
	for _, l := range ls {
		at := l.At.Sub(loadStart)
		inFault, inNATS := false, false
		for _, f := range faults {
			onPath := f.Kind == FaultAPI || f.Kind == FaultNATS || f.Kind == FaultPostgres
			if onPath && at >= f.At-time.Second && at <= f.Up+2*time.Second {
				inFault = true
			}
			if f.Kind == FaultNATS && at >= f.At && at <= f.Up+2*time.Second {
				inNATS = true
			}
		}
		switch {
		case inNATS:
			nats = append(nats, l.D)
		case !inFault:
			steady = append(steady, l.D)
		}
	}
	var out LatencyFigures
	out.SteadyN, out.SteadyP50, out.SteadyP99 = percentiles(steady)
	out.NATSN, out.NATSP50, out.NATSP99 = percentiles(nats)
	return out
}

func percentiles(ds []time.Duration) (int, time.Duration, time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	n := len(ds)
	return n, ds[n/2], ds[min(n-1, n*99/100)]
}

// outageProblems are the broken promises of issue 15 item 6.
func (r *Report) outageProblems() []string {
	var p []string
	l := r.Limits
	if l.Over > 0 {
		p = append(p, fmt.Sprintf("the limited company got %d requests over its ceiling of %d a minute (%d during NATS restarts); first: %s",
			l.Over, l.Ceiling, l.OverDuringNATS, l.FirstOver))
	}
	if n := l.NoHeaders + r.Writes.NoLimitHeaders; n > 0 {
		p = append(p, fmt.Sprintf("%d answers through the rate limit without RateLimit headers", n))
	}
	if l.Allowed == 0 || (l.Refused == 0 && l.Sent > 2*l.Ceiling) {
		p = append(p, fmt.Sprintf("the limited company was not limited (%d allowed, %d refused): nothing measured", l.Allowed, l.Refused))
	}
	lat := r.Latency
	if r.MaxNATSLatencyRatio > 0 && lat.NATSN > 0 && lat.Ratio() > r.MaxNATSLatencyRatio {
		p = append(p, fmt.Sprintf("write p99 while NATS restarted %v is %.1f× steady p99 %v (bar %.0f×)", lat.NATSP99.Round(time.Millisecond),
			lat.Ratio(), lat.SteadyP99.Round(time.Millisecond), r.MaxNATSLatencyRatio))
	}
	return p
}

// writeOutage prints the outage figures.
func (r *Report) writeOutage(w func(format string, args ...any)) {
	lat, l := r.Latency, r.Limits
	ms := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	w("writes p99:  steady %s (p50 %s, %d writes); while NATS restarted %s (p50 %s, %d writes): %.1f× steady%s",
		ms(lat.SteadyP99), ms(lat.SteadyP50), lat.SteadyN, ms(lat.NATSP99), ms(lat.NATSP50), lat.NATSN, lat.Ratio(),
		map[bool]string{true: fmt.Sprintf(" (bar %.0f×)", r.MaxNATSLatencyRatio), false: " (target ≤ 3×)"}[r.MaxNATSLatencyRatio > 0])
	w("rate limit:  limited company, %d a minute, offered %.0f a minute: %d sent, %d allowed, %d refused 429, other %s; while NATS restarted %d allowed, %d refused; over the ceiling %d (during NATS restarts %d); answers without RateLimit headers %d of the limited company, %d of the load",
		l.Ceiling, float64(time.Minute/limitedEvery), l.Sent, l.Allowed, l.Refused, sortedMap(l.Other), l.AllowedDuringNATS,
		l.RefusedDuringNATS, l.Over, l.OverDuringNATS, l.NoHeaders, r.Writes.NoLimitHeaders)
}
