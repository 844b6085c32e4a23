package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"oficina/ops/testkit"
)

// localReceiver is the developer's own endpoint: it verifies every post
// with the Standard Webhooks library under listen's secret and counts the
// events by id and by type.
type localReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	byID   map[string]int
	byType map[string]int
	bad    []string
}

func newLocalReceiver(t *testing.T, secret string) *localReceiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r := &localReceiver{byID: map[string]int{}, byType: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var env struct{ ID, Type string }
		_ = json.Unmarshal(body, &env)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := wh.Verify(body, req.Header); err != nil || req.Header.Get("webhook-id") != env.ID {
			r.bad = append(r.bad, env.ID+": "+err.Error())
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.byID[env.ID]++
		r.byType[env.Type]++
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// settle waits until no post has arrived for 300 ms.
func (r *localReceiver) settle(t *testing.T) {
	t.Helper()
	total := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		n := 0
		for _, c := range r.byID {
			n += c
		}
		return n
	}
	for last, quiet := total(), 0; quiet < 3; {
		time.Sleep(100 * time.Millisecond)
		if n := total(); n != last {
			last, quiet = n, 0
		} else {
			quiet++
		}
	}
}

func (r *localReceiver) count(typ string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byType[typ]
}

// listening runs `oficina listen` until stop; ready is when it has
// connected (from describes where it starts).
func listening(t *testing.T, args []string, from string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out testkit.SyncBuffer
	done := make(chan error, 1)
	go func() { done <- runListen(ctx, args, &out, io.Discard) }()
	testkit.Eventually(t, "listen to connect", func() bool { return strings.Contains(out.String(), "listen: ready, from "+from) })
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("listen: %v\n%s", err, out.String())
			}
		case <-time.After(10 * time.Second):
			t.Error("listen did not stop")
		}
	}
}

// Issue 26 item 4: `oficina listen` against a running server forwards
// every event type `oficina trigger` can make, each signed with listen's
// own secret (verified by the Standard Webhooks library); killed and
// started again, it resumes from the last event it received: what happened
// meanwhile arrives, nothing twice.
func TestListenForwardsWhatTriggerMakesAndResumesAfterARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dev := devProcess{t: t, ownerURL: testkit.ScratchDB(t, "listen"), dataDir: filepath.Join(dir, "data")}
	p := dev.start(testkit.NewKeyEntry(t, "k1"), "")
	listenDir := filepath.Join(dir, "listen")
	secret, err := listenSecret(filepath.Join(listenDir, "secret"))
	if err != nil {
		t.Fatal(err)
	}
	recv := newLocalReceiver(t, secret)
	api := []string{"--api", "http://" + p.public, "--api-key", p.key}
	args := append([]string{"--forward-to", recv.srv.URL + "/webhooks", "--dir", listenDir}, api...)
	trigger := func(typ string) {
		t.Helper()
		// The endpoint webhook_endpoint.* triggers make: a destination
		// this server allows (loopback), never sent to.
		args := append(append([]string{}, api...), "--endpoint-url", "https://127.0.0.1:9/trigger", typ)
		if err := runTrigger(context.Background(), args, io.Discard, io.Discard); err != nil {
			t.Fatalf("trigger %s: %v", typ, err)
		}
	}

	stop := listening(t, args, "the next event")
	for _, typ := range triggerable() {
		before := recv.count(typ)
		trigger(typ)
		testkit.Eventually(t, typ+" at the local receiver", func() bool { return recv.count(typ) > before })
	}
	// A trigger makes more events than the one waited for: stop once the
	// last of them has arrived, as a developer would (a listen stopped
	// while a post is in flight sends that event again: at least once).
	recv.settle(t)
	stop()

	// Away: these happen while listen is not running.
	missed := []string{"sale.created", "client.created", "service_order.created"}
	before := map[string]int{}
	for _, typ := range missed {
		before[typ] = recv.count(typ)
		trigger(typ)
	}
	stop = listening(t, args, "after position ")
	defer stop()
	for _, typ := range missed {
		testkit.Eventually(t, typ+" missed while away", func() bool { return recv.count(typ) > before[typ] })
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.bad) > 0 {
		t.Errorf("posts that do not verify: %v", recv.bad)
	}
	for id, n := range recv.byID {
		if n != 1 {
			t.Errorf("event %s arrived %d times", id, n)
		}
	}
}
