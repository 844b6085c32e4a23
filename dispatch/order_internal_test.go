package dispatch

import (
	"fmt"
	"testing"
	"time"

	"oficina/streams"
)

// Decision 0039: a full partition trims a company's unordered queues to its
// share (decision 0023) but never parks an ordered endpoint's backlog to
// make room — every later event of an object would wait for what was
// parked; it waits in the stream instead.
func TestAFullPartitionParksNoOrderedBacklog(t *testing.T) {
	t.Parallel()
	g := newGate(Config{EndpointCap: 5, CompanyCap: 10, CompanyShare: 20, ParkDelay: time.Second, FailingParkSpread: time.Minute})
	for i := range 60 {
		for _, ep := range []string{"we_ordered", "we_plain"} {
			dm := streams.DeliveryMessage{CompanyID: "co", EndpointID: ep, DeliveryID: fmt.Sprintf("dlv_%s_%d", ep, i)}
			if ep == "we_ordered" {
				dm.OrderKey, dm.OrderSeq = fmt.Sprintf("sale_%d", i), int64(i)
			}
			g.admit(job{dm: dm})
		}
	}
	park, _ := g.evict()
	if len(park) == 0 {
		t.Fatal("nothing parked: the unordered queue over the share should be")
	}
	for _, j := range park {
		if j.dm.OrderKey != "" {
			t.Fatalf("parked %s of an ordered endpoint", j.dm.DeliveryID)
		}
	}
}
