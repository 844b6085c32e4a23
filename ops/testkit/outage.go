package testkit

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	"oficina/ops/natsembed"
)

// RestartableNATS is an embedded JetStream server a test can stop and
// start again on the same port and store, as a restarted server comes
// back: clients reconnect to it by themselves.
type RestartableNATS struct {
	dir  string
	port int
	s    *natsembed.Server
}

// NewRestartableNATS starts one for the test; it is shut down at the end.
func NewRestartableNATS(t testing.TB) *RestartableNATS {
	t.Helper()
	n := &RestartableNATS{dir: t.TempDir(), port: -1}
	n.Start(t)
	u, err := url.Parse(n.s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	if n.port, err = strconv.Atoi(u.Port()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return n
}

// URL is the client URL (the same across restarts).
func (n *RestartableNATS) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

// Stop shuts the server down (clients see their connection drop).
func (n *RestartableNATS) Stop() {
	if n.s != nil {
		n.s.Shutdown()
		n.s = nil
	}
}

// Start starts it again (the port may take a moment to be free).
func (n *RestartableNATS) Start(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := natsembed.Start(context.Background(), natsembed.Config{Port: n.port, StoreDir: n.dir})
		if err == nil {
			n.s = s
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("testkit: nats restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Eventually waits until cond holds, polling; the test fails if it does
// not within a minute (a bound against hanging, not a measured time).
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Poll(time.Minute, 10*time.Millisecond, cond) {
		t.Fatalf("testkit: still waiting for %s", what)
	}
}

// Poll calls cond every interval until it holds or timeout passes, and
// reports whether it held.
func Poll(timeout, every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
}
