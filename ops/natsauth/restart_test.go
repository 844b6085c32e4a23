package natsauth_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"oficina/dispatch"
	"oficina/ops/natsauth"
	"oficina/ops/testkit"
	"oficina/schema/service"
)

// Issue 23 item 4: a dispatcher restarted under the dispatch user's
// permissions takes its partitions back at once, and the server refuses
// it nothing. The previous run handed its partitions back by deleting
// their lease keys; taking such a key reads its delete marker (a direct
// get on the lease bucket). When that read was refused, each take waited
// for its round's deadline and the partitions came back about 7 s late.
// The bound is generous (the refused read cost seconds, not milliseconds).
func TestRestartedDispatcherTakesItsPartitionsAtOnce(t *testing.T) {
	t.Parallel()
	const partitions, bound = 4, 3 * time.Second
	ns := testkit.NATSWithUsers(t)
	setUp(t, connect(t, ns, natsauth.API))

	first := runDispatcher(t, ns, partitions)
	first.waitOwned(t, partitions, 20*time.Second)
	first.stop()

	start := time.Now()
	second := runDispatcher(t, ns, partitions)
	second.waitOwned(t, partitions, bound)
	t.Logf("the restarted dispatcher owned its %d partitions after %v", partitions, time.Since(start).Round(time.Millisecond))
	for _, d := range []*dispatcherRun{first, second} {
		for _, err := range drain(d.user.errs) {
			if errors.Is(err, nats.ErrPermissionViolation) {
				t.Errorf("the server refused the dispatcher: %v", err)
			}
		}
	}
}

// dispatcherRun is a dispatcher running as the dispatch user on its own
// connection, as `oficina dispatch` does, with the production lease TTL.
type dispatcherRun struct {
	user user
	d    *dispatch.Dispatcher
	stop func()
}

func runDispatcher(t *testing.T, ns *testkit.SecureNATS, partitions int) *dispatcherRun {
	t.Helper()
	u := connect(t, ns, natsauth.Dispatch)
	d, err := dispatch.New(dispatch.Config{Base: service.Base{Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		DB: testkit.WorkerDB(t), JS: u.js, Client: http.DefaultClient, Secrets: testkit.Keyring(t), Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := testkit.Stoppable(t, "dispatcher", d.Run)
	return &dispatcherRun{user: u, d: d, stop: stop}
}

// waitOwned fails the test unless the dispatcher owns n partitions within
// bound.
func (r *dispatcherRun) waitOwned(t *testing.T, n int, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for len(r.d.Owned()) != n {
		if time.Now().After(deadline) {
			t.Fatalf("the dispatcher owns %v after %v, want %d partitions (refused: %v)", r.d.Owned(), bound, n, drain(r.user.errs))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
