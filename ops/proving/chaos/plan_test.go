package chaos

import (
	"math/rand/v2"
	"oficina/ops/testkit/hooks"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A schedule injects every kind of fault, in order, inside the load; a
// single round starts with the faults whose cost is AckWait, and a seed
// replays the same schedule.
func TestFaultPlanCoversEveryKindOnce(t *testing.T) {
	t.Parallel()
	kinds := []string{FaultAPI, FaultRelay, FaultDispatcher, FaultNATS, FaultPostgres}
	for _, tc := range []struct {
		name   string
		d      time.Duration
		faults int
	}{
		{"short", 20 * time.Second, 5},
		{"two minutes", 2 * time.Minute, 8},
		{"three minutes", 3 * time.Minute, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for seed := range uint64(50) {
				plan := planFaults(rand.New(rand.NewPCG(seed, seed)), tc.d, kinds)
				if len(plan) != tc.faults {
					t.Fatalf("seed %d: %d faults, want %d", seed, len(plan), tc.faults)
				}
				var got []string
				for i, pf := range plan {
					got = append(got, pf.kind)
					if pf.at < tc.d/20 || pf.at > tc.d*3/4 || (i > 0 && pf.at < plan[i-1].at) || pf.down <= 0 {
						t.Fatalf("seed %d: fault %d (%s) at %v down %v: outside [5 %%, 75 %%] of %v or out of order",
							seed, i, pf.kind, pf.at, pf.down, tc.d)
					}
				}
				for _, k := range kinds {
					if !slices.Contains(got, k) {
						t.Fatalf("seed %d: no %s in %v", seed, k, got)
					}
				}
				if tc.faults == len(kinds) && (got[0] != FaultDispatcher || got[1] != FaultNATS) {
					t.Fatalf("seed %d: a single round starts %v, want the dispatcher then NATS", seed, got[:2])
				}
				again := planFaults(rand.New(rand.NewPCG(seed, seed)), tc.d, kinds)
				if !slices.Equal(plan, again) {
					t.Fatalf("seed %d: the schedule is not replayed", seed)
				}
			}
		})
	}
}

// The report counts a recorded delivery that never arrived as lost, every
// arrival beyond the first as a duplicate, and a fault's recovery as the
// last first arrival of what was recorded before it was back.
func TestReportCountsLostAndDuplicates(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	recv := seen{got: map[hooks.Key]hooks.Delivery{
		deliveryKey("co", "evt_a"): {First: at(1.01), Last: at(1.01), N: 1},
		deliveryKey("co", "evt_b"): {First: at(4), Last: at(9), N: 3},
		deliveryKey("co", "evt_c"): {First: at(7), Last: at(7), N: 1},
	}}
	rows := []deliveryRow{
		{id: "dlv_a", company: "co", event: "evt_a", status: "succeeded", created: at(1)},
		{id: "dlv_b", company: "co", event: "evt_b", status: "succeeded", created: at(2)},
		{id: "dlv_c", company: "co", event: "evt_c", status: "succeeded", created: at(6)},
		{id: "dlv_d", company: "co", event: "evt_d", status: "pending", created: at(7.5)},
	}
	rep := &Report{MaxDuplicateRatio: 0.001, Recovered: true,
		Faults: []Fault{{Kind: FaultNATS, At: 2 * time.Second, Up: 3 * time.Second}, {Kind: FaultAPI, At: 7 * time.Second, Up: 8 * time.Second}}}
	rep.tally(rows, recv, t0)
	if rep.Recorded != 4 || rep.Received != 3 || rep.LostCount != 1 || rep.NotSucceeded != 1 || rep.Duplicates != 2 {
		t.Fatalf("recorded %d received %d lost %d not succeeded %d duplicates %d; want 4 3 1 1 2",
			rep.Recorded, rep.Received, rep.LostCount, rep.NotSucceeded, rep.Duplicates)
	}
	if f := rep.Faults[0]; f.Clear != time.Second || f.Duplicates != 2 {
		t.Errorf("first fault: clear %v, duplicates %d; want 1s (evt_b arrived at 4 s, back at 3 s) and 2", f.Clear, f.Duplicates)
	}
	if rep.Faults[1].Clear != -1 || rep.Recovery != -1 {
		t.Errorf("second fault: clear %v, recovery %v; want never (evt_d, recorded before it was back, never arrived)",
			rep.Faults[1].Clear, rep.Recovery)
	}
	if len(rep.Problems()) == 0 {
		t.Error("a report with a lost delivery has no problems")
	}
}

// A delivery that succeeded is never sent again: a duplicate is tolerated
// (under the ratio bar) only when its first send was around a kill -9 of a
// dispatcher, which dies between the receiver's answer and the record.
func TestOnlyADispatcherKillMayRepeatASend(t *testing.T) {
	t.Parallel()
	faults := func() []Fault {
		return []Fault{{Kind: FaultDispatcher, Target: "dispatch-1", At: 2 * time.Second, Up: 5 * time.Second},
			{Kind: FaultNATS, Target: "embedded JetStream", At: 10 * time.Second, Up: 11 * time.Second}}
	}
	for _, tc := range []struct {
		name  string
		first float64 // seconds into the load of the duplicated delivery's first send
		fails bool
	}{
		{"around the dispatcher's kill", 1.8, false},
		{"around a NATS restart", 10.5, true},
		{"outside every fault", 20, true},
		{"before the first fault", 0.5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			t0 := time.Now()
			at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
			recv := seen{got: map[hooks.Key]hooks.Delivery{}}
			var rows []deliveryRow
			for i := range 2000 { // one duplicate in 2,000: under the 0.1 % bar
				ev := "evt_" + strconv.Itoa(i)
				recv.got[deliveryKey("co", ev)] = hooks.Delivery{First: at(tc.first), Last: at(tc.first), N: 1}
				rows = append(rows, deliveryRow{id: "dlv_" + strconv.Itoa(i), company: "co", event: ev, status: "succeeded",
					created: at(tc.first - 0.1)})
			}
			recv.got[deliveryKey("co", "evt_0")] = hooks.Delivery{First: at(tc.first), Last: at(40), N: 2}
			rep := &Report{MaxDuplicateRatio: 0.001, Recovered: true, Faults: faults(),
				Limits: LimitFigures{Ceiling: 30, Sent: 40, Allowed: 30, Refused: 10}} // a limit that held
			rep.tally(rows, recv, t0)
			if rep.Duplicates != 1 {
				t.Fatalf("%d duplicates, want 1", rep.Duplicates)
			}
			if p := rep.Problems(); (len(p) > 0) != tc.fails {
				t.Errorf("problems %q, want some: %v", p, tc.fails)
			}
		})
	}
}

// Issue 27 item 4 under faults: the report finds a delivery to an ordered
// endpoint that first arrived before one of its object placed before it,
// whatever the order of the rows, and only that.
func TestReportFindsDeliveriesOutOfOrder(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	recv := seen{got: map[hooks.Key]hooks.Delivery{
		deliveryKey("co", "evt_1"): {First: at(1), Last: at(5), N: 2}, // sent again after a kill: still first
		deliveryKey("co", "evt_2"): {First: at(2), Last: at(2), N: 1},
		deliveryKey("co", "evt_3"): {First: at(1.5), Last: at(1.5), N: 1}, // before evt_2: out of order
		deliveryKey("co", "evt_x"): {First: at(0.5), Last: at(0.5), N: 1}, // another object
		deliveryKey("co", "evt_u"): {First: at(0.1), Last: at(0.1), N: 1}, // unordered
	}}
	rows := []deliveryRow{
		{id: "dlv_3", company: "co", event: "evt_3", status: "succeeded", created: at(0.3), orderKey: "cli_a", orderSeq: 3 << 16},
		{id: "dlv_1", company: "co", event: "evt_1", status: "succeeded", created: at(0.1), orderKey: "cli_a", orderSeq: 1 << 16},
		{id: "dlv_2", company: "co", event: "evt_2", status: "succeeded", created: at(0.2), orderKey: "cli_a", orderSeq: 2 << 16},
		{id: "dlv_x", company: "co", event: "evt_x", status: "succeeded", created: at(0.2), orderKey: "cli_b", orderSeq: 4 << 16},
		{id: "dlv_u", company: "co", event: "evt_u", status: "succeeded", created: at(0.05)},
	}
	rep := &Report{MaxDuplicateRatio: 1, Recovered: true, OrderedEndpoints: 1}
	rep.tally(rows, recv, t0)
	if rep.OrderedObjects != 2 || rep.OrderedChain != 3 || rep.OutOfOrder != 1 {
		t.Fatalf("objects %d, longest %d, out of order %d (%v); want 2, 3, 1", rep.OrderedObjects, rep.OrderedChain,
			rep.OutOfOrder, rep.OutOfOrderIDs)
	}
	if !strings.Contains(strings.Join(rep.Problems(), "\n"), "dlv_3 arrived") {
		t.Errorf("the problems do not name dlv_3: %v", rep.Problems())
	}
}
