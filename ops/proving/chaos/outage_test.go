package chaos

import (
	"net/http"
	"testing"
	"time"
)

// The over-ceiling count is certain whatever the network's delays: request
// j counts only when it was answered less than a window after request
// j-Ceiling was sent; requests allowed a window apart, or whose order in
// time is uncertain, do not count. Answers are laid against NATS restarts.
func TestOverCeilingCountsOnlyCertainExcess(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var got []limitAnswer
	ok := func(sent time.Duration, took time.Duration) {
		got = append(got, limitAnswer{sent: t0.Add(sent), answered: t0.Add(sent + took), status: http.StatusCreated, headers: true})
	}
	for i := range limitedCeiling { // a full window's worth in the first 30 s
		ok(time.Duration(i)*time.Second, 10*time.Millisecond)
	}
	ok(60*time.Second, 10*time.Millisecond)                      // the first left: in budget
	ok(61*time.Second-20*time.Millisecond, 30*time.Millisecond)  // second sent at 1 s, this answered at 61.01 s: in budget
	ok(61*time.Second+500*time.Millisecond, 10*time.Millisecond) // the third (sent at 2 s) has not left: over
	got = append(got, limitAnswer{sent: t0.Add(62 * time.Second), answered: t0.Add(62*time.Second + time.Millisecond),
		status: http.StatusTooManyRequests}) // refused, and without headers
	faults := []Fault{{Kind: FaultNATS, At: 61 * time.Second, Up: 62 * time.Second}}
	f := limitFigures(got, faults, t0)
	if f.Allowed != limitedCeiling+3 || f.Refused != 1 || f.Over != 1 || f.OverDuringNATS != 1 || f.NoHeaders != 1 ||
		f.AllowedDuringNATS != 2 || f.RefusedDuringNATS != 1 {
		t.Fatalf("%+v", f)
	}
}

// Write latencies are split into steady running (outside every fault on
// the write path) and NATS restarts; relay and dispatcher faults do not
// take writes out of the steady set.
func TestLatencyFiguresSplitSteadyFromNATSRestarts(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	faults := []Fault{
		{Kind: FaultRelay, At: 10 * time.Second, Up: 20 * time.Second},
		{Kind: FaultNATS, At: 30 * time.Second, Up: 32 * time.Second},
		{Kind: FaultPostgres, At: 40 * time.Second, Up: 42 * time.Second},
	}
	var ls []Latency
	for s := range 50 {
		d := 10 * time.Millisecond
		if s >= 30 && s <= 34 {
			d = 20 * time.Millisecond
		}
		if s >= 39 && s <= 44 {
			d = time.Second
		}
		ls = append(ls, Latency{At: t0.Add(time.Duration(s) * time.Second), D: d})
	}
	l := latencyFigures(ls, faults, t0)
	if l.NATSN != 5 || l.NATSP99 != 20*time.Millisecond || l.SteadyN != 50-5-1-6 || l.SteadyP99 != 10*time.Millisecond || l.Ratio() != 2 {
		t.Fatalf("%+v ratio %.1f", l, l.Ratio())
	}
}
