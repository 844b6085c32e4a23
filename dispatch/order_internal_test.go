package dispatch

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"oficina/streams"
)

// chained is a partition holding, for each object of company co, a chain
// of n jobs in place order (none in the gate).
func chained(w *partition, co string, lengths map[string]int) {
	for obj, n := range lengths {
		c := &chain{active: "dlv_" + obj + "_active"}
		for i := range n {
			c.jobs = append(c.jobs, job{dm: streams.DeliveryMessage{CompanyID: co, EndpointID: "we_" + co,
				DeliveryID: fmt.Sprintf("dlv_%s_%d", obj, i), OrderKey: obj, OrderSeq: int64(i)}})
		}
		w.chains[chainRef{"we_" + co, obj}] = c
	}
}

// Decision 0023's isolation holds for ordered endpoints (decision 0039): a
// full partition trims a company's chains to its share, parking the
// newest jobs of its longest chains, so each chain keeps its order and the
// other companies' messages can be fetched; a company within its share
// keeps everything.
func TestAFullPartitionTrimsLongChainsFromTheirEnd(t *testing.T) {
	t.Parallel()
	w := &partition{g: newGate(Config{EndpointCap: 5, CompanyCap: 10, CompanyShare: 50, ParkDelay: time.Second,
		FailingParkSpread: time.Minute}), chains: map[chainRef]*chain{}}
	chained(w, "big", map[string]int{"so_long": 100, "so_short": 20})
	chained(w, "small", map[string]int{"so_small": 10})
	park, delays := w.evictChains()
	if len(park) != 70 || len(delays) != 70 {
		t.Fatalf("parked %d (%d delays), want 70: big's 120 down to its share of 50", len(park), len(delays))
	}
	long, short := w.chains[chainRef{"we_big", "so_long"}], w.chains[chainRef{"we_big", "so_short"}]
	if len(long.jobs)+len(short.jobs) != 50 || len(long.jobs) < len(short.jobs)-1 {
		t.Errorf("big keeps %d + %d, want 50 taken from the longer first", len(long.jobs), len(short.jobs))
	}
	for _, c := range []*chain{long, short} {
		if !slices.IsSortedFunc(c.jobs, func(a, b job) int { return int(a.dm.OrderSeq - b.dm.OrderSeq) }) || c.jobs[0].dm.OrderSeq != 0 {
			t.Errorf("a trimmed chain lost its first jobs or its order: %v…", c.jobs[0].dm.DeliveryID)
		}
	}
	for _, j := range park {
		if j.dm.CompanyID != "big" {
			t.Fatalf("parked %s of a company within its share", j.dm.DeliveryID)
		}
		kept := w.chains[chainRef{"we_big", j.dm.OrderKey}].jobs
		if last := kept[len(kept)-1]; j.dm.OrderSeq <= last.dm.OrderSeq {
			t.Errorf("parked %s though %s, after it in its object's order, stays", j.dm.DeliveryID, last.dm.DeliveryID)
		}
	}
	if got := len(w.chains[chainRef{"we_small", "so_small"}].jobs); got != 10 {
		t.Errorf("small keeps %d, want all 10", got)
	}
}
