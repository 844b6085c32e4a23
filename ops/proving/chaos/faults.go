package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"oficina/ops/natsembed"
)

// Fault kinds.
const (
	FaultAPI        = "kill -9 API"
	FaultRelay      = "kill -9 relay"
	FaultDispatcher = "kill -9 dispatcher"
	FaultNATS       = "restart NATS"
	FaultPostgres   = "restart PostgreSQL"
)

// Fault is one fault as injected.
type Fault struct {
	Kind   string
	Target string        // the process, or how PostgreSQL was stopped
	At     time.Duration // injected, from the start of the load
	Up     time.Duration // the part was back (a `serve` ready again)
	Err    string        // the part did not come back
	// Clear is how long after Up every delivery recorded before Up had
	// reached the receiver (-1: some never did).
	Clear time.Duration
	// Writes that did not answer 201 from At to 2 s after Up, by status
	// or error.
	Refused map[string]int
	// Duplicates of deliveries first sent from 1 s before At to 2 s
	// after Up: the sends this fault made repeat. Only a dispatcher's
	// kill -9 may have any (Report.Problems).
	Duplicates int
}

// plannedFault is a fault of the schedule: its kind, the earliest time
// to inject it and how long the part stays down.
type plannedFault struct {
	kind     string
	at, down time.Duration
}

// planFaults spreads faults over [5 %, 75 %] of the load, one of each
// kind per round, in random order, one per 15 s of load (a round at
// least). A single round starts with the dispatcher and NATS: what they
// leave un-acked comes back only after the consumers' AckWait (60 s), and
// that wait then overlaps the rest of the run instead of following it.
func planFaults(rng *rand.Rand, d time.Duration, kinds []string) []plannedFault {
	n := max(len(kinds), int(d/(15*time.Second)))
	var order []string
	for len(order) < n {
		round := append([]string(nil), kinds...)
		rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		order = append(order, round...)
	}
	order = order[:n]
	if n == len(kinds) {
		for pos, k := range []string{FaultDispatcher, FaultNATS} {
			if i := slices.Index(order, k); i > pos {
				order[pos], order[i] = order[i], order[pos]
			}
		}
	}
	from, to := d/20, d*3/4
	slot := (to - from) / time.Duration(n)
	out := make([]plannedFault, n)
	for i, k := range order {
		out[i] = plannedFault{kind: k, at: from + time.Duration(i)*slot + randDur(rng, 0, slot/2), down: downTime(rng, k)}
	}
	return out
}

// downTime is how long a part stays down: a dispatcher sometimes longer
// than its lease (10 s), so the other takes its partitions over.
func downTime(rng *rand.Rand, kind string) time.Duration {
	switch kind {
	case FaultDispatcher:
		return randDur(rng, 2*time.Second, 15*time.Second)
	case FaultPostgres, FaultNATS:
		return randDur(rng, 500*time.Millisecond, 3*time.Second)
	default:
		return randDur(rng, 500*time.Millisecond, 4*time.Second)
	}
}

func randDur(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// inject runs one fault: takes the part down, waits, brings it back.
func (r *run) inject(ctx context.Context, pf plannedFault) Fault {
	f := Fault{Kind: pf.kind, At: time.Since(r.loadStart)}
	var err error
	switch pf.kind {
	case FaultAPI, FaultRelay, FaultDispatcher:
		c := r.relay
		switch pf.kind {
		case FaultAPI:
			c = r.apis[r.rng.IntN(len(r.apis))]
		case FaultDispatcher:
			c = r.dispatchers[r.rng.IntN(len(r.dispatchers))]
		}
		f.Target = c.name
		c.kill9()
		sleep(ctx, pf.down)
		err = c.restart(ctx)
	case FaultNATS:
		f.Target = "embedded JetStream"
		err = r.nats.restart(ctx, pf.down)
	case FaultPostgres:
		mode := []string{pgFast, pgImmediate, pgKill}[r.rng.IntN(3)]
		f.Target = "stop " + mode
		r.pg.stop(mode)
		sleep(ctx, pf.down)
		err = r.pg.start(ctx)
	}
	f.Up = time.Since(r.loadStart)
	if err != nil {
		f.Err = err.Error()
	}
	r.logf("fault %-20s %-20s at %6s, back at %6s%s", f.Kind, f.Target, f.At.Round(100*time.Millisecond),
		f.Up.Round(100*time.Millisecond), map[bool]string{true: " — NOT BACK: " + f.Err}[err != nil])
	return f
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// natsServer is the embedded JetStream server of the run, restarted on
// the same port and store, as a restarted server would come back.
type natsServer struct {
	dir  string
	port int

	mu sync.Mutex
	s  *natsembed.Server
}

func startNATS(ctx context.Context, dir string) (*natsServer, error) {
	s, err := natsembed.Start(ctx, natsembed.Config{Port: -1, StoreDir: dir})
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(s.ClientURL())
	if err != nil {
		s.Shutdown()
		return nil, err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		s.Shutdown()
		return nil, fmt.Errorf("nats: client url %s: %w", s.ClientURL(), err)
	}
	return &natsServer{dir: dir, port: port, s: s}, nil
}

func (n *natsServer) url() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

// restart shuts the server down, waits down, and starts it again (the
// port may take a moment to be free).
func (n *natsServer) restart(ctx context.Context, down time.Duration) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.s.Shutdown()
	sleep(ctx, down)
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := natsembed.Start(ctx, natsembed.Config{Port: n.port, StoreDir: n.dir})
		if err == nil {
			n.s = s
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("nats: restart on port %d: %w", n.port, err)
		}
		sleep(ctx, 200*time.Millisecond)
	}
}

func (n *natsServer) shutdown() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.s != nil {
		n.s.Shutdown()
	}
}
