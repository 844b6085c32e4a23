package dispatch

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/streams"
)

// gate holds the caps of one partition: at most CompanyCap sends in flight
// per company and EndpointCap per endpoint (1 while the endpoint is
// failing). A company lives in exactly one partition and a partition has
// one owner, so these in-memory counters are the caps across every
// dispatcher. A healthy endpoint's messages over a cap wait in memory:
// what the partition may hold is bounded by the consumer's MaxAckPending,
// and JetStream keeps the rest (decision 0023). A failing endpoint's
// are parked. When the partition is full and more waits behind it, evict
// trims each company to companyShare, so one company's backlog cannot keep
// the others of its partition from being fetched. It is used by one
// partition's goroutine under mu.
type gate struct {
	endpointCap, companyCap int
	companyShare            int
	parkDelay, parkSpread   time.Duration
	probeInterval           time.Duration
	companies               map[string]*companyState
}

type companyState struct {
	inflight, queued int
	endpoints        map[string]*endpointState
	order            []string // endpoints with a queue, round robin
}

type endpointState struct {
	inflight int
	failing  bool
	queue    []job
	// parked estimates how much of the endpoint's backlog is parked now:
	// parks minus starts.
	parked int
	// probeAfter: a failing endpoint gets its next attempt no sooner.
	probeAfter time.Time
}

// job is one message waiting for, or holding, a slot, with the delivery
// message parsed from it once (admit).
type job struct {
	msg jetstream.Msg
	dm  streams.DeliveryMessage
	// retry: the message is the delivery's scheduled retry, due now.
	retry bool
	// pre is its plan, prepared while it waits in a queue (ahead.go).
	pre *ahead
}

func newGate(c Config) *gate {
	return &gate{endpointCap: c.EndpointCap, companyCap: c.CompanyCap, companyShare: c.CompanyShare,
		parkDelay: c.ParkDelay, parkSpread: c.FailingParkSpread,
		probeInterval: c.FailingProbeInterval,
		companies:     map[string]*companyState{}}
}

func (g *gate) state(company, endpointID string) (*companyState, *endpointState) {
	co := g.companies[company]
	if co == nil {
		co = &companyState{endpoints: map[string]*endpointState{}}
		g.companies[company] = co
	}
	ep := co.endpoints[endpointID]
	if ep == nil {
		ep = &endpointState{}
		co.endpoints[endpointID] = ep
	}
	return co, ep
}

func (g *gate) window(ep *endpointState) int {
	if ep.failing {
		return 1
	}
	return g.endpointCap
}

// admit decides for a new job: start it now, queue it (a healthy
// endpoint), or park it (a failing endpoint: back after parkFor).
func (g *gate) admit(j job) (start, park bool) {
	co, ep := g.state(j.dm.CompanyID, j.dm.EndpointID)
	// A delivery's scheduled retry has waited its schedule: it may probe
	// before the interval ends (the first retry, 5 s ± 10 %, would
	// otherwise often land just inside a 5 s interval and be parked for
	// minutes), still one at a time.
	probe := !ep.failing || j.retry || !time.Now().Before(ep.probeAfter)
	if probe && ep.inflight < g.window(ep) && co.inflight < g.companyCap && len(ep.queue) == 0 {
		ep.inflight++
		co.inflight++
		ep.parked = max(0, ep.parked-1)
		return true, false
	}
	if ep.failing { // a failing endpoint's backlog is parked, never held
		ep.parked++
		return false, true
	}
	if len(ep.queue) == 0 {
		co.order = append(co.order, j.dm.EndpointID)
	}
	ep.queue = append(ep.queue, j)
	co.queued++
	return false, false
}

// evict trims every company holding more than companyShare (in flight and
// queued) down to it, taking the newest queued jobs, endpoint by endpoint
// from the longest queue. The partition calls it when it is full and the
// consumer has more behind: those jobs are parked so the messages behind
// them — maybe another company's — can be fetched.
func (g *gate) evict() (park []job, delays []time.Duration) {
	for _, co := range g.companies {
		for co.inflight+co.queued > g.companyShare && co.queued > 0 {
			var longest *endpointState
			for _, id := range co.order {
				q := co.endpoints[id]
				if len(q.queue) > 0 && q.queue[0].dm.OrderKey != "" {
					continue // ordered: its backlog waits in the stream, in order (decision 0039)
				}
				if longest == nil || len(q.queue) > len(longest.queue) {
					longest = q
				}
			}
			if longest == nil || len(longest.queue) == 0 {
				break
			}
			n := len(longest.queue) - 1
			longest.parked++
			park = append(park, longest.queue[n])
			delays = append(delays, g.parkFor(longest))
			longest.queue = longest.queue[:n]
			co.queued--
		}
	}
	return park, delays
}

// parkFor is when a parked job of ep comes back: a failing endpoint's are
// spread over parkSpread, as it is probed one delivery at a time; a healthy
// endpoint's over a time that grows with its parked backlog (up to
// parkSpread), so a burst of thousands is not parked again and again every
// parkDelay while the endpoint works through it.
func (g *gate) parkFor(ep *endpointState) time.Duration {
	spread := g.parkSpread
	if !ep.failing {
		spread = min(spread, g.parkDelay*time.Duration(ep.parked)/time.Duration(max(1, g.companyShare)))
	}
	if spread <= 0 {
		return g.parkDelay
	}
	return g.parkDelay + rand.N(spread)
}

// done releases j's slot and records the endpoint's health. It returns the
// jobs to start now and, when the endpoint just started failing, its
// queue to park (each back after parkFor).
func (g *gate) done(j job, sent, ok, failing bool) (start, park []job) {
	co, ep := g.state(j.dm.CompanyID, j.dm.EndpointID)
	ep.inflight--
	co.inflight--
	if sent {
		ep.failing = failing && !ok
		if ep.failing {
			// One probe per interval: a failing endpoint's backlog is not
			// spent as fast as the receiver can answer 5xx.
			ep.probeAfter = time.Now().Add(g.probeInterval)
		}
	}
	if ep.failing && len(ep.queue) > 0 {
		ep.parked += len(ep.queue)
		park = ep.queue
		co.queued -= len(ep.queue)
		ep.queue = nil
	}
	// Round robin over the company's endpoints with a queue, until no
	// queued job can start.
	for progress := true; progress && co.inflight < g.companyCap; {
		progress = false
		for i := 0; i < len(co.order) && co.inflight < g.companyCap; {
			q := co.endpoints[co.order[i]]
			if len(q.queue) == 0 {
				co.order = append(co.order[:i], co.order[i+1:]...)
				continue
			}
			if q.inflight < g.window(q) {
				q.parked = max(0, q.parked-1)
				start = append(start, q.queue[0])
				q.queue = q.queue[1:]
				q.inflight++
				co.inflight++
				co.queued--
				progress = true
			}
			i++
		}
	}
	if co.inflight == 0 && co.queued == 0 && !anyFailing(co) {
		delete(g.companies, j.dm.CompanyID) // keep memory to active companies
	}
	return start, park
}

func anyFailing(co *companyState) bool {
	for _, ep := range co.endpoints {
		if ep.failing {
			return true
		}
	}
	return false
}

// setFailing records what the database says of an endpoint's health.
func (g *gate) setFailing(company, endpointID string, failing bool) {
	_, ep := g.state(company, endpointID)
	ep.failing = failing
}

// front returns (a copy of) the jobs at the front of the endpoint's queue,
// at most n: those its next slots take.
func (g *gate) front(company, endpointID string, n int) []job {
	co := g.companies[company]
	if co == nil {
		return nil
	}
	ep := co.endpoints[endpointID]
	if ep == nil {
		return nil
	}
	return slices.Clone(ep.queue[:min(n, len(ep.queue))])
}
