package chaos

import (
	"cmp"
	"fmt"
	"maps"
	"oficina/ops/testkit/hooks"
	"slices"
	"strings"
	"time"
)

// Report is what a run saw.
type Report struct {
	Seed              uint64
	Rate              float64 // lead captures per second asked of the load
	Companies         int
	MaxDuplicateRatio float64
	Load              time.Duration // how long the load ran
	Faults            []Fault
	Writes            Writes
	Probes            []string // writes refused after the faults

	Recorded     int      // delivery rows in PostgreSQL
	Received     int      // of them, arrived at the receiver
	Succeeded    int      // of them, `succeeded`
	Lost         []string // recorded, never arrived (the first 20)
	LostCount    int
	NotSucceeded int
	Duplicates   int // arrivals beyond the first of a delivery
	// DuplicatesOutsideFaults are duplicates first sent outside every
	// fault's window.
	DuplicatesOutsideFaults int
	DuplicateIDs            []string // the first 10 deliveries received more than once
	Unrecorded              int      // webhook-ids that arrived with no delivery row
	Mismatched              []string // webhook-id header differing from the body's id
	Requests                int      // requests the receiver answered
	// OrderedObjects are the objects of the ordered endpoints; OutOfOrder
	// counts their deliveries that first arrived before one recorded
	// before them (the first 10 in OutOfOrderIDs).
	OrderedEndpoints int // companies whose endpoint orders by object
	OrderedObjects   int
	OrderedChain     int // the longest object's deliveries
	OutOfOrder       int
	OutOfOrderIDs    []string
	// OrderedP50 and OrderedP99: commit → receiver of the ordered
	// endpoints' deliveries (each waits for the one before it).
	OrderedP50, OrderedP99 time.Duration

	Recovered bool // everything arrived within RecoveryTimeout
	// Recovery is how long after the last fault every delivery recorded
	// before it had arrived (-1: some never did).
	Recovery time.Duration
	// Drain is from the end of the load to the moment every delivery was
	// seen arrived and succeeded (polled every 0.5 s).
	Drain                          time.Duration
	LatencyP50, LatencyP99, Latest time.Duration // commit → receiver, first arrival
	Slowest                        []string      // the three slowest deliveries

	// RefusedOutsideFaults counts writes that did not answer 201 outside
	// every fault's window (by status or error).
	RefusedOutsideFaults map[string]int

	Exits           []string // processes that exited by themselves (restarted)
	Down            []string // processes not running or not ready at the end
	PostgresSkipped string   // why PostgreSQL was not restarted, if it was not
	Notes           []string // diagnostics of a failed run

	// CommittedUnseen are deliveries of writes that committed although
	// their client saw them fail (recorded minus every 201).
	CommittedUnseen int

	// Limits are the limited company's answers; Latency compares write
	// answer times while NATS restarts with steady running, against
	// MaxNATSLatencyRatio (Config's; 0: reported only).
	Limits              LimitFigures
	Latency             LatencyFigures
	MaxNATSLatencyRatio float64

	companies   []company
	extraWrites int // 201s outside the load: warm-up and probes
}

// DuplicateRatio is Duplicates over Recorded.
func (r *Report) DuplicateRatio() float64 {
	if r.Recorded == 0 {
		return 0
	}
	return float64(r.Duplicates) / float64(r.Recorded)
}

// tally compares the delivery rows with what the receiver saw.
func (r *Report) tally(rows []deliveryRow, s seen, loadStart time.Time) {
	got := s.got
	r.Requests, r.Mismatched, r.Recorded = s.requests, s.mismatched, len(rows)
	r.CommittedUnseen = r.Recorded - r.Writes.Committed - r.extraWrites
	recorded := make(map[hooks.Key]bool, len(rows))
	var lat []time.Duration
	type slowOne struct {
		d   deliveryRow
		lat time.Duration
	}
	var slow []slowOne
	for _, d := range rows {
		k := deliveryKey(d.company, d.event)
		recorded[k] = true
		if d.status == "succeeded" {
			r.Succeeded++
		} else {
			r.NotSucceeded++
		}
		a, ok := got[k]
		if !ok {
			r.LostCount++
			if len(r.Lost) < 20 {
				r.Lost = append(r.Lost, fmt.Sprintf("%s (company %s, webhook-id %s, %s, %d attempts, published %v, error %q)",
					d.id, d.company, d.event, d.status, d.attempts, d.published, d.err))
			}
			continue
		}
		r.Received++
		r.Duplicates += a.N - 1
		lat = append(lat, max(0, a.First.Sub(d.created)))
		slow = append(slow, slowOne{d, a.First.Sub(d.created)})
	}
	for k := range got {
		if !recorded[k] {
			r.Unrecorded++
		}
	}
	r.tallyOrder(rows, got)
	slices.SortFunc(slow, func(a, b slowOne) int { return int(b.lat - a.lat) })
	for _, o := range slow[:min(3, len(slow))] {
		r.Slowest = append(r.Slowest, fmt.Sprintf("%s recorded at +%.1fs, arrived %v later", o.d.id,
			o.d.created.Sub(loadStart).Seconds(), o.lat.Round(time.Millisecond)))
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		r.LatencyP50, r.LatencyP99, r.Latest = lat[n/2], lat[min(n-1, n*99/100)], lat[n-1]
	}
	for i := range r.Faults {
		f := &r.Faults[i]
		up := loadStart.Add(f.Up)
		var last time.Time
		f.Clear = 0
		for _, d := range rows {
			if !d.created.Before(up) {
				continue
			}
			a, ok := got[deliveryKey(d.company, d.event)]
			if !ok {
				f.Clear = -1
				break
			}
			if a.First.After(last) {
				last = a.First
			}
		}
		if f.Clear == 0 && last.After(up) {
			f.Clear = last.Sub(up)
		}
	}
	// Writes refused or failed are laid against the faults; those outside
	// every fault would be a finding of their own.
	for _, wp := range r.Writes.Problems {
		key := wp.Err
		if wp.Status != 0 {
			key = fmt.Sprint(wp.Status)
		}
		// Faults are sequential: a write belongs to the last fault
		// injected before it, if that one was back less than 2 s before.
		at := wp.At.Sub(loadStart)
		var f *Fault
		for i := range r.Faults {
			if r.Faults[i].At <= at {
				f = &r.Faults[i]
			}
		}
		if f != nil && at <= f.Up+2*time.Second {
			if f.Refused == nil {
				f.Refused = map[string]int{}
			}
			f.Refused[key]++
		} else {
			if r.RefusedOutsideFaults == nil {
				r.RefusedOutsideFaults = map[string]int{}
			}
			r.RefusedOutsideFaults[key]++
		}
	}
	// A duplicate is charged to the fault around its first send.
	for _, d := range rows {
		a, ok := got[deliveryKey(d.company, d.event)]
		if !ok || a.N < 2 {
			continue
		}
		at := a.First.Sub(loadStart)
		var f *Fault
		for i := range r.Faults {
			if r.Faults[i].At-time.Second <= at {
				f = &r.Faults[i]
			}
		}
		if len(r.DuplicateIDs) < 10 {
			r.DuplicateIDs = append(r.DuplicateIDs, fmt.Sprintf("%s ×%d (first +%.1fs, last +%.1fs, %d attempts recorded)", d.id, a.N,
				a.First.Sub(loadStart).Seconds(), a.Last.Sub(loadStart).Seconds(), d.attempts))
		}
		if f != nil && at <= f.Up+2*time.Second {
			f.Duplicates += a.N - 1
		} else {
			r.DuplicatesOutsideFaults += a.N - 1
		}
	}
	r.Recovery = -1
	if n := len(r.Faults); n > 0 {
		r.Recovery = r.Faults[n-1].Clear
	}
}

// Problems are the broken promises of the run; none means it passed.
func (r *Report) Problems() []string {
	var p []string
	if r.Recorded == 0 {
		p = append(p, "no deliveries recorded: the load did not exercise anything")
	}
	if !r.Recovered {
		p = append(p, "not every recorded delivery arrived and succeeded within the recovery timeout")
	}
	if r.LostCount > 0 {
		p = append(p, fmt.Sprintf("%d of %d recorded deliveries never reached the receiver: %s", r.LostCount, r.Recorded,
			strings.Join(r.Lost, "; ")))
	}
	if r.NotSucceeded > 0 {
		p = append(p, fmt.Sprintf("%d recorded deliveries are not succeeded", r.NotSucceeded))
	}
	// A delivery that succeeded is never sent again. The one repeat by
	// construction is a kill -9 of a dispatcher between the receiver's 2xx
	// and the record (the record dies with the process): duplicates first
	// sent around any other fault, or outside every fault, are broken
	// promises, whatever their number.
	if r.DuplicatesOutsideFaults > 0 {
		p = append(p, fmt.Sprintf("%d duplicates first sent outside every fault (a delivery that succeeded was sent again): %s",
			r.DuplicatesOutsideFaults, strings.Join(r.DuplicateIDs, "; ")))
	}
	for _, f := range r.Faults {
		if f.Duplicates > 0 && f.Kind != FaultDispatcher {
			p = append(p, fmt.Sprintf("%d duplicates first sent around %s (%s) at %v: only a killed dispatcher may repeat a send",
				f.Duplicates, f.Kind, f.Target, f.At.Round(100*time.Millisecond)))
		}
	}
	if r.DuplicateRatio() >= r.MaxDuplicateRatio {
		p = append(p, fmt.Sprintf("duplicates %d of %d = %.3f %%, the bar is below %.3f %%", r.Duplicates, r.Recorded,
			100*r.DuplicateRatio(), 100*r.MaxDuplicateRatio))
	}
	if r.OutOfOrder > 0 {
		p = append(p, fmt.Sprintf("%d deliveries to ordered endpoints arrived before one of their object recorded before them: %s",
			r.OutOfOrder, strings.Join(r.OutOfOrderIDs, "; ")))
	}
	if r.OrderedEndpoints > 0 && r.OrderedObjects == 0 {
		p = append(p, "no object of an ordered endpoint: the load did not exercise ordered delivery")
	}
	if len(r.Mismatched) > 0 {
		p = append(p, fmt.Sprintf("%d requests whose webhook-id is not the body's id: %v", len(r.Mismatched), r.Mismatched[:min(5, len(r.Mismatched))]))
	}
	if r.Unrecorded > 0 {
		p = append(p, fmt.Sprintf("%d webhook-ids arrived that PostgreSQL has no delivery for", r.Unrecorded))
	}
	for _, f := range r.Faults {
		if f.Err != "" {
			p = append(p, fmt.Sprintf("after %s (%s) at %v the part did not come back: %s", f.Kind, f.Target, f.At, f.Err))
		}
	}
	p = append(p, r.outageProblems()...)
	p = append(p, r.Down...)
	p = append(p, r.Probes...)
	return p
}

// String is the report as printed.
func (r *Report) String() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	ms := func(d time.Duration) string {
		if d < 0 {
			return "never"
		}
		return d.Round(time.Millisecond).String()
	}
	w("chaos report — seed %d (rerun: CHAOS_SEED=%d)", r.Seed, r.Seed)
	w("load:        %v of lead captures, %.0f/s asked, %d companies, over 2 API processes; 1 relay, 2 dispatchers",
		r.Load.Round(100*time.Millisecond), r.Rate, r.Companies)
	w("faults:      %d", len(r.Faults))
	for _, f := range r.Faults {
		status := "everything recorded before it arrived " + ms(f.Clear) + " after"
		if f.Err != "" {
			status = "NOT BACK: " + f.Err
		}
		w("  +%-7s %-20s %-22s back at +%-7s %s; writes not 201 meanwhile %s; duplicates %d", f.At.Round(100*time.Millisecond),
			f.Kind, f.Target, f.Up.Round(100*time.Millisecond), status, sortedMap(f.Refused), f.Duplicates)
	}
	if r.PostgresSkipped != "" {
		w("  (no PostgreSQL restart: %s)", r.PostgresSkipped)
	}
	w("writes:      %d attempted, %d committed (201), refused %v, no answer %d %v; outside the faults %v", r.Writes.Attempted,
		r.Writes.Committed, sortedMap(r.Writes.Refused), r.Writes.Failed, sortedMap(r.Writes.Errors), sortedMap(r.RefusedOutsideFaults))
	w("deliveries:  %d recorded (%d of writes whose client saw a failure), %d received, %d lost, %d succeeded, %d not succeeded; receiver answered %d requests",
		r.Recorded, r.CommittedUnseen, r.Received, r.LostCount, r.Succeeded, r.NotSucceeded, r.Requests)
	w("duplicates:  %d (%.3f %%; bar < %.3f %%); first sent outside the faults %d", r.Duplicates, 100*r.DuplicateRatio(),
		100*r.MaxDuplicateRatio, r.DuplicatesOutsideFaults)
	if len(r.DuplicateIDs) > 0 {
		w("  %s", strings.Join(r.DuplicateIDs, "; "))
	}
	w("order:       %d endpoints ordered by object: %d objects (up to %d events each), %d deliveries out of order; commit → receiver p50 %s, p99 %s",
		r.OrderedEndpoints, r.OrderedObjects, r.OrderedChain, r.OutOfOrder, ms(r.OrderedP50), ms(r.OrderedP99))
	w("recovery:    %s after the last fault; all delivered %s after the load stopped (complete: %v)",
		ms(r.Recovery), ms(r.Drain), r.Recovered)
	w("latency:     commit → receiver p50 %s, p99 %s, max %s; slowest: %s", ms(r.LatencyP50), ms(r.LatencyP99), ms(r.Latest),
		strings.Join(r.Slowest, "; "))
	r.writeOutage(w)
	if len(r.Exits) == 0 {
		w("processes:   no exit but the injected ones")
	} else {
		w("processes:   %d exits nobody asked for (restarted a second later):", len(r.Exits))
		for _, e := range r.Exits {
			w("  %s", e)
		}
	}
	seen := map[int]bool{}
	for _, wp := range r.Writes.Problems {
		if wp.Status != 0 && !seen[wp.Status] {
			seen[wp.Status] = true
			w("first %d:   %s", wp.Status, wp.Body)
		}
	}
	for _, n := range r.Notes {
		w("note: %s", n)
	}
	return b.String()
}

func sortedMap[K int | string](m map[K]int) string {
	if len(m) == 0 {
		return "{}"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%v: %d", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// tallyOrder checks the ordered endpoints' deliveries (issue 27 item 4):
// sorted by their place in their object's order, each first arrived no
// earlier than the one before it. The receiver answers 2xx at once, so a
// first arrival is a success unless a dispatcher died before recording it,
// and then the one before it is sent again before the next is.
func (r *Report) tallyOrder(rows []deliveryRow, got map[hooks.Key]hooks.Delivery) {
	type object struct{ company, key string }
	chains := map[object][]deliveryRow{}
	for _, d := range rows {
		if d.orderKey != "" {
			o := object{d.company, d.orderKey}
			chains[o] = append(chains[o], d)
		}
	}
	r.OrderedObjects = len(chains)
	var lat []time.Duration
	for _, c := range chains {
		for _, d := range c {
			if a, ok := got[deliveryKey(d.company, d.event)]; ok {
				lat = append(lat, max(0, a.First.Sub(d.created)))
			}
		}
		r.OrderedChain = max(r.OrderedChain, len(c))
		slices.SortFunc(c, func(a, b deliveryRow) int { return cmp.Compare(a.orderSeq, b.orderSeq) })
		for i := 1; i < len(c); i++ {
			prev, okPrev := got[deliveryKey(c[i-1].company, c[i-1].event)]
			cur, okCur := got[deliveryKey(c[i].company, c[i].event)]
			if okPrev && okCur && cur.First.Before(prev.First) {
				r.OutOfOrder++
				if len(r.OutOfOrderIDs) < 10 {
					r.OutOfOrderIDs = append(r.OutOfOrderIDs, fmt.Sprintf("%s arrived %v before %s", c[i].id,
						prev.First.Sub(cur.First).Round(time.Millisecond), c[i-1].id))
				}
			}
		}
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		r.OrderedP50, r.OrderedP99 = lat[n/2], lat[min(n-1, n*99/100)]
	}
}
