package scaleout_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/dispatch"
	"oficina/dispatch/lease"
	"oficina/ops/natsembed"
	"oficina/ops/proving/pace"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// Issue 9, "a real cluster": three NATS servers with every stream at
// replicas 3, the API and two dispatchers on them, a steady load of writes
// that create webhook deliveries through the public API; the server that
// leads DELIVERIES is stopped in the middle and restarted later. Every
// delivery PostgreSQL recorded reaches the receiver and ends `succeeded`
// with its original webhook-id, and deliveries keep arriving while the
// server is down. Duplicates (at-least-once) are reported, not failed.
func TestNATSNodeLossLosesNoDelivery(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	log := newLogger(t)
	ph := newPhases()
	cl, err := natsembed.StartCluster(ctx, 3, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Shutdown)
	natsURL := strings.Join(cl.ClientURLs(), ",") // NATS_URL as an operator sets it
	recv := newReceiver(t)

	// Four companies, two on each dispatcher's partitions (dispatchers
	// sorted by id each take the partitions p with p % 2 == their rank).
	var cos []company
	for even, odd := 0, 0; even+odd < 4; {
		co := newCompany(t, tenant.CompanyInput{RateLimitUnlimited: testkit.Ptr(true)})
		if jsconfig.PartitionOf(co.id, partitions)%2 == 0 && even < 2 {
			even++
		} else if jsconfig.PartitionOf(co.id, partitions)%2 == 1 && odd < 2 {
			odd++
		} else {
			continue
		}
		cos = append(cos, co)
	}
	api := startAPI(t, apiOptions{natsURL: natsURL, replicas: 3, caFile: writeCA(t, recv), only: companyIDs(cos), log: log})
	for _, co := range cos {
		api.newEndpoint(t, co.key, hookURL(recv, co.id, "hook"), "client.created")
	}
	r3 := func(c *dispatch.Config) { c.LeaseReplicas = 3 } // as ops/stack sets it from OFICINA_STREAM_REPLICAS
	dsps := [2]*dispatch.Dispatcher{startDispatcher(t, natsURL, "dsp_a", recv, log, r3),
		startDispatcher(t, natsURL, "dsp_b", recv, log, r3)}
	ph.mark("cluster, API, dispatchers up")
	waitShared(t, dsps)
	ph.mark("partitions shared")
	js, err := jetstream.New(connectNATS(t, natsURL, "scaleout-observer"))
	if err != nil {
		t.Fatal(err)
	}
	checkReplicas(t, js)

	ld := startLoad(ctx, api, cos, 60*time.Millisecond)
	t.Cleanup(func() { ld.stop() })
	if !recv.WaitFor(30*time.Second, func() bool { return recv.Succeeded(time.Time{}, time.Time{}) >= 40 }) {
		t.Fatalf("before the fault: only %d deliveries arrived", recv.Succeeded(time.Time{}, time.Time{}))
	}

	ph.mark("load flowing")
	victim := deliveriesLeaderToStop(t, js, cl)
	downAt := time.Now()
	t.Logf("stopping %s at %s", cl.NodeName(victim), downAt.UTC().Format("15:04:05.000"))
	if err := cl.Stop(victim); err != nil {
		t.Fatal(err)
	}
	// Keep loading with the node down for 5 s — longer than a dispatcher
	// takes to notice a lost lease (LeaseTTL/3) — and until 40 more
	// deliveries arrived (or 20 s: the assertion below then fails).
	recv.WaitFor(20*time.Second, func() bool {
		return time.Since(downAt) >= 5*time.Second && recv.Succeeded(downAt, time.Time{}) >= 40
	})
	upAt := time.Now()
	ph.mark("node down")
	if err := cl.Restart(ctx, victim); err != nil {
		t.Fatalf("restart %s: %v", cl.NodeName(victim), err)
	}
	restartedAt := time.Now()
	ph.mark("node restarted")
	recv.WaitFor(15*time.Second, func() bool { return recv.Succeeded(restartedAt, time.Time{}) >= 20 })
	stats := ld.stop()
	ph.mark("load after restart")

	// Everything recorded drains: published after commit, or by the relay
	// when the publish failed during the election.
	var rows []streams.Delivery
	drained := eventually(60*time.Second, func() bool {
		rows = rows[:0]
		for _, co := range cos {
			rows = append(rows, co.deliveries(t)...)
		}
		for _, d := range rows {
			if d.Status != streams.StatusSucceeded {
				return false
			}
		}
		return true
	})
	ph.mark("drain")
	t.Logf("phases: %s; lead writes: p50 %v, p99 %v, max %v", ph, stats.quantile(0.5), stats.quantile(0.99), stats.quantile(1))

	o := judge(rows, recv.Arrivals(), downAt, upAt)
	t.Logf("stopped %s (DELIVERIES leader) for %v: %d leads written (%d refused, %d errors), %d deliveries recorded, "+
		"%d received while the node was down (first %v after the stop, longest pause %v; %d in its second half; by dispatcher %v), "+
		"%d duplicates (%.2f %%), drained: %v",
		cl.NodeName(victim), upAt.Sub(downAt).Round(time.Millisecond), stats.created, stats.refused, stats.errors,
		len(rows), o.duringOutage, o.firstAfter.Round(time.Millisecond), o.gap.Round(time.Millisecond), o.lateOutage,
		o.byDispatcher, o.dups, pct(o.dups, len(rows)), drained)

	if stats.refused+stats.errors > 0 {
		t.Errorf("the API refused %d and failed %d lead writes during the fault (first: %s); writes need PostgreSQL only",
			stats.refused, stats.errors, stats.firstProblem)
	}
	if len(rows) != stats.created {
		t.Errorf("%d delivery rows for %d leads answered 201 (one endpoint per company)", len(rows), stats.created)
	}
	if len(o.lost) > 0 {
		t.Errorf("%d of %d recorded deliveries never reached the receiver: %v", len(o.lost), len(rows), first(o.lost, 10))
	}
	if len(o.notSucceeded) > 0 {
		t.Errorf("%d deliveries not succeeded: %v", len(o.notSucceeded), first(o.notSucceeded, 10))
	}
	if o.lateOutage == 0 {
		t.Errorf("no delivery of a write made after the stop reached the receiver in the second half of the %v %s was down "+
			"(%d arrived in all, first %v after the stop): dispatch stopped", upAt.Sub(downAt).Round(time.Millisecond),
			cl.NodeName(victim), o.duringOutage, o.firstAfter.Round(time.Millisecond))
	}
}

// outcome is what the receiver saw of the recorded deliveries.
type outcome struct {
	lost, notSucceeded []string // delivery ids
	dups               int      // 2xx answers beyond the first per endpoint and webhook-id
	// While the node was down [downAt, upAt): deliveries answered 2xx,
	// the first one's and the longest wait, those of writes made after the
	// stop arriving in the outage's second half, and who sent them.
	duringOutage, lateOutage int
	firstAfter, gap          time.Duration
	byDispatcher             map[string]int
}

// judge matches the delivery rows with the receiver's arrivals: each row
// must have reached its endpoint (/<company>/hook) with its event id as
// webhook-id.
func judge(rows []streams.Delivery, arrivals []hooks.Arrival, downAt, upAt time.Time) outcome {
	o := outcome{byDispatcher: map[string]int{}}
	got := map[string]int{} // path + webhook-id → 2xx answers
	for _, a := range arrivals {
		if a.Status/100 == 2 {
			got[a.Path+" "+a.WebhookID]++
		}
	}
	created := map[string]time.Time{}
	for _, d := range rows {
		created[d.EventID] = d.CreatedAt
		switch n := got["/"+d.CompanyID+"/hook "+d.EventID]; {
		case n == 0:
			o.lost = append(o.lost, d.ID)
		case n > 1:
			o.dups += n - 1
		}
		if d.Status != streams.StatusSucceeded {
			o.notSucceeded = append(o.notSucceeded, fmt.Sprintf("%s %s attempts=%d err=%s", d.ID, d.Status,
				d.AttemptCount, deref(d.Error)))
		}
	}
	// Dispatch went on: deliveries of writes made after the stop arrived in
	// the second half of the outage (not merely sends already in flight).
	mid := downAt.Add(upAt.Sub(downAt) / 2)
	prev := downAt
	for _, a := range arrivals {
		if a.Status/100 != 2 || a.At.Before(downAt) || !a.At.Before(upAt) {
			continue
		}
		if o.duringOutage == 0 {
			o.firstAfter = a.At.Sub(downAt)
		}
		o.gap, prev = max(o.gap, a.At.Sub(prev)), a.At
		o.duringOutage++
		o.byDispatcher[dispatcherOf(a)]++
		if !a.At.Before(mid) && created[a.WebhookID].After(downAt) {
			o.lateOutage++
		}
	}
	return o
}

// waitShared waits until the two dispatchers have settled how they split
// the partitions: sorted by id, each owns the partitions p with p % 2 ==
// its rank (dispatch/lease), and nothing is in transit.
func waitShared(t *testing.T, ds [2]*dispatch.Dispatcher) {
	t.Helper()
	want := [2][]int{}
	for p := range partitions {
		want[p%2] = append(want[p%2], p)
	}
	ok := eventually(30*time.Second, func() bool {
		return slices.Equal(ds[0].Owned(), want[0]) && slices.Equal(ds[1].Owned(), want[1])
	})
	if !ok {
		t.Fatalf("partitions not shared: %s owns %v, %s owns %v", ds[0].ID(), ds[0].Owned(), ds[1].ID(), ds[1].Owned())
	}
}

// checkReplicas asserts what the test is about: the API created every
// stream and bucket it owns with 3 replicas.
func checkReplicas(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	ctx := t.Context()
	for _, name := range []string{jsconfig.EventsStream, jsconfig.DeliveriesStream, "KV_" + jsconfig.RateLimitBucket} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Errorf("stream %s has %d replicas, want 3 (OFICINA_STREAM_REPLICAS)", name, r)
		}
	}
}

// deliveriesLeaderToStop returns the node leading DELIVERIES, after
// checking that the dispatchers' lease bucket is replicated like the
// streams (with one replica, losing its server would stop every
// dispatcher).
func deliveriesLeaderToStop(t *testing.T, js jetstream.JetStream, cl *natsembed.Cluster) int {
	t.Helper()
	ctx := t.Context()
	leader := streamLeader(t, js, jsconfig.DeliveriesStream, "")
	ls, err := js.Stream(ctx, "KV_"+lease.Bucket)
	if err != nil {
		t.Fatalf("lease bucket: %v", err)
	}
	if r := ls.CachedInfo().Config.Replicas; r < 3 {
		t.Fatalf("lease bucket %s has %d replica(s), want 3", lease.Bucket, r)
	}
	return cl.NodeIndex(leader)
}

// streamLeader waits for name to have a leader other than not.
func streamLeader(t *testing.T, js jetstream.JetStream, name, not string) string {
	t.Helper()
	ctx := t.Context()
	var leader string
	ok := eventually(10*time.Second, func() bool {
		s, err := js.Stream(ctx, name)
		if err != nil || s.CachedInfo().Cluster == nil {
			return false
		}
		leader = s.CachedInfo().Cluster.Leader
		return leader != "" && leader != not
	})
	if !ok {
		t.Fatalf("stream %s: no leader (other than %q)", name, not)
	}
	return leader
}

// load writes leads through the API at a steady pace, one writer per
// company, until stopped.
type load struct {
	driver *pace.Driver

	mu           sync.Mutex
	created      int
	refused      int // non-201 answers
	errors       int // no answer
	firstProblem string
	latencies    []time.Duration
}

// quantile of the write latencies (q = 1: the slowest).
func (l *load) quantile(q float64) time.Duration {
	if len(l.latencies) == 0 {
		return 0
	}
	s := slices.Clone(l.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))].Round(time.Millisecond)
}

func startLoad(ctx context.Context, api *apiProc, cos []company, every time.Duration) *load {
	l := &load{}
	l.driver = pace.Start(ctx, len(cos), every, func(ctx context.Context, ci, i int) {
		start := time.Now()
		r, err := api.captureLead(ctx, cos[ci].key, fmt.Sprintf("%d-%d", ci, i))
		l.note(r, err, time.Since(start))
	})
	return l
}

func (l *load) note(r response, err error, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.latencies = append(l.latencies, took)
	switch {
	case err != nil:
		l.errors++
		if l.firstProblem == "" {
			l.firstProblem = err.Error()
		}
	case r.status == 201:
		l.created++
	default:
		l.refused++
		if l.firstProblem == "" {
			l.firstProblem = fmt.Sprintf("%d %s", r.status, r.raw)
		}
	}
}

// stop ends the load once the requests in flight are answered (a request
// cut off could commit unseen) and returns its counts.
func (l *load) stop() *load {
	l.driver.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l
}

func companyIDs(cos []company) []string {
	var ids []string
	for _, c := range cos {
		ids = append(ids, c.id)
	}
	return ids
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func first[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// phases times the steps of a test, for its log.
type phases struct {
	last time.Time
	out  []string
}

func newPhases() *phases { return &phases{last: time.Now()} }

func (p *phases) mark(name string) {
	now := time.Now()
	p.out = append(p.out, fmt.Sprintf("%s %v", name, now.Sub(p.last).Round(10*time.Millisecond)))
	p.last = now
}

func (p *phases) String() string { return strings.Join(p.out, ", ") }
