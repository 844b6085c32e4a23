package dispatch

import (
	"cmp"
	"slices"
	"time"

	"oficina/streams"
)

// Ordered delivery per object (decision 0039). The database decides: a
// delivery to an endpoint with ordering "object" is sent only when every
// delivery of its object recorded before it is final (the views list those
// still pending), so the order holds across retries, restarts and owners.
// The partition only spares that check what it already knows: the held
// messages of one object to one endpoint form a chain, sorted by their
// place (the message's order headers), and only one of them — its active
// job — goes through the gate at a time; the rest wait in memory, taking
// no slot, no probe of a failing endpoint and no database cycle. When the
// active job is released (sent, parked, handed back) the next of its chain
// goes in. When the database says the active job must wait for a delivery
// this partition does not hold (a retry scheduled on the stream), the
// whole chain is parked until that delivery's next attempt is due.

// orderMargin is how long after the next attempt of the delivery a chain
// waits for the chain comes back: by then that attempt has been fetched,
// so the chain finds it held and waits behind it in memory.
const orderMargin = 500 * time.Millisecond

// chainRef names a chain: one object to one endpoint.
type chainRef struct{ endpoint, key string }

// chain is the held jobs of one object to one endpoint: active is the
// delivery id of the one in the gate ("" when none), jobs the others,
// sorted by place.
type chain struct {
	active string
	jobs   []job
}

func refOf(j job) chainRef { return chainRef{j.dm.EndpointID, j.dm.OrderKey} }

// joinChain adds the held job j to its chain and reports whether it is the
// chain's active job now (it enters the gate); w.mu is held.
func (w *partition) joinChain(j job) bool {
	ref := refOf(j)
	c := w.chains[ref]
	if c == nil {
		c = &chain{}
		w.chains[ref] = c
	}
	if c.active == "" {
		c.active = j.dm.DeliveryID
		return true
	}
	c.insert(j)
	return false
}

// insert puts j among the waiting jobs in its place.
func (c *chain) insert(j job) {
	i, _ := slices.BinarySearchFunc(c.jobs, j.dm.OrderSeq, func(o job, seq int64) int { return cmp.Compare(o.dm.OrderSeq, seq) })
	c.jobs = slices.Insert(c.jobs, i, j)
}

// next makes the first waiting job the active one and returns it (nil when
// none waits; the chain is then forgotten).
func (w *partition) next(ref chainRef, c *chain) *job {
	if len(c.jobs) == 0 {
		c.active = ""
		delete(w.chains, ref)
		return nil
	}
	n := c.jobs[0]
	c.jobs = c.jobs[1:]
	c.active = n.dm.DeliveryID
	return &n
}

// leaveChain takes the released job j out of its chain and returns the
// job to enter the gate next, if j was the active one; w.mu is held.
func (w *partition) leaveChain(j job) *job {
	if j.dm.OrderKey == "" {
		return nil
	}
	ref := refOf(j)
	c := w.chains[ref]
	if c == nil {
		return nil
	}
	if c.active != j.dm.DeliveryID {
		// A waiting job released without going through the gate (the
		// partition stopping): only forget it.
		c.jobs = slices.DeleteFunc(c.jobs, func(o job) bool { return o.msg == j.msg })
		return nil
	}
	return w.next(ref, c)
}

// nextToPrepare returns the job after j in its chain, when j is its
// chain's job in the gate and that one's plan is not being read yet: its
// plan is read in the cycle that records j's success, after the record,
// so it sees j final and the next send need not wait for a cycle of its
// own (a chain's step is one cycle, not two).
func (w *partition) nextToPrepare(j job) (*streams.DeliveryMessage, *ahead) {
	if j.dm.OrderKey == "" {
		return nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.chains[refOf(j)]
	if c == nil || c.active != j.dm.DeliveryID || len(c.jobs) == 0 {
		return nil, nil
	}
	n := c.jobs[0]
	if !n.pre.launched.CompareAndSwap(false, true) {
		return nil, nil
	}
	dm := n.dm
	return &dm, n.pre
}

// blocked handles j, whose plan says it must wait for b: when one of b is
// held here (in j's chain: it arrived after j went in), j goes back to its
// chain and the chain's first goes in; otherwise j and its whole chain are
// parked until the first of b is due again (ParkDelay when it has no
// attempt scheduled: it is about to be tried). j's slot is already free.
func (w *partition) blocked(j job, b orderWait) {
	j.pre = newAhead() // its plan said wait: the next one is read afresh
	w.mu.Lock()
	if w.stopping {
		w.mu.Unlock()
		w.handBack(j)
		return
	}
	ref := refOf(j)
	c := w.chains[ref]
	park := []job{j}
	if j.dm.OrderKey != "" && c != nil && c.active == j.dm.DeliveryID {
		if slices.ContainsFunc(b.on, func(id string) bool { _, held := w.held[id]; return held }) {
			c.insert(j)
			if c.jobs[0].msg != j.msg {
				n := w.next(ref, c)
				w.mu.Unlock()
				w.enter(*n)
				return
			}
			// What j waits for is held but not in its chain (being
			// parked): j stays active and is parked, not retried at once.
			c.jobs = c.jobs[1:]
		}
		// Everything after j in its chain waits for the same delivery.
		// The chain stays, active j, until j's park releases it; what
		// arrives meanwhile waits behind it.
		park = append(park, c.jobs...)
		c.jobs = nil
	}
	delay := w.d.cfg.ParkDelay
	if b.until != nil {
		delay = max(delay, b.until.Sub(w.d.cfg.BusinessNow())+orderMargin)
	}
	// Those before it that this partition parked come back when it said:
	// asking before then would only park the chain again.
	for _, id := range b.on {
		if at, ok := w.parkedUntil[id]; ok {
			delay = max(delay, time.Until(at)+orderMargin)
		}
	}
	w.mu.Unlock()
	for _, p := range park {
		w.park(p, delay)
	}
}

// maxParkedNoted bounds parkedUntil: past it, the entries whose time has
// passed (their messages came back elsewhere, or not yet) are dropped.
const maxParkedNoted = 10_000

// noteParked remembers when the ordered delivery id, parked now, comes
// back.
func (w *partition) noteParked(id string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.parkedUntil) >= maxParkedNoted {
		now := time.Now()
		for k, t := range w.parkedUntil {
			if t.Before(now) {
				delete(w.parkedUntil, k)
			}
		}
	}
	w.parkedUntil[id] = at
}
