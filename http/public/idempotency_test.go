package public_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/http/public"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/clients"
	"oficina/schema/idempotency"
	"oficina/streams"
	"oficina/tenant"
)

// idemEnv is an API with the test write route and a company key allowed
// to use it.
type idemEnv struct {
	api    *httpkit.API
	co     *testkit.Company
	key    string
	writes *public.TestWrites
	pub    *testkit.Publisher
	clock  *testkit.Clock
	told   toldResults
}

// toldResults counts what the API's Idempotency hook (metrics) was told.
type toldResults struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *toldResults) tell(result string) { r.mu.Lock(); r.n[result]++; r.mu.Unlock() }

func (r *toldResults) count(result string) int { r.mu.Lock(); defer r.mu.Unlock(); return r.n[result] }

func newIdemEnv(t *testing.T) *idemEnv {
	t.Helper()
	e := &idemEnv{pub: &testkit.Publisher{}, clock: testkit.NowClock(), told: toldResults{n: map[string]int{}}}
	e.api = httpkit.NewAPI(t, httpkit.APIOptions{Now: e.clock.Now, Publisher: e.pub, Idempotency: e.told.tell})
	e.writes = public.RegisterTestWrites(e.api.Public)
	e.co = testkit.NewCompany(t, tenant.CompanyInput{})
	e.key = e.co.OwnerKey(t, "clients:create", "clients:read")
	return e
}

func (e *idemEnv) post(t *testing.T, key string, body any, hdr ...string) *httpkit.Response {
	t.Helper()
	h := map[string]string{}
	if key != "" {
		h[public.IdempotencyHeader] = key
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		h[hdr[i]] = hdr[i+1]
	}
	return e.api.Do(t, httpkit.Req{Method: "POST", Path: "/test_writes", Key: e.key, Body: body, Header: h})
}

// written counts the company's client records named name and its
// client.created events in the outbox.
func (e *idemEnv) written(t *testing.T, name string) (records, events int) {
	t.Helper()
	e.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		n, err := tx.NewSelect().Model((*clients.Row)(nil)).Where("name = ?", name).Count(ctx)
		if err != nil {
			return err
		}
		records = int(n)
		var rows []streams.OutboxEvent
		if err := tx.NewSelect().Model(&rows).Where("type = 'client.created'").Scan(ctx); err != nil {
			return err
		}
		for _, r := range rows {
			var env struct {
				Data struct {
					Object struct{ Name string } `json:"object"`
				} `json:"data"`
			}
			if err := json.Unmarshal(r.Body, &env); err != nil {
				return err
			}
			if env.Data.Object.Name == name {
				events++
			}
		}
		return nil
	})
	return records, events
}

// Spec 4.1: same key and same request → the stored response (status, body,
// Location), nothing written again, no event published again; a replay
// leaves out what the handler marked (the endpoint secret); the request may
// re-serialise the same JSON. Without a key every POST writes.
func TestIdempotentReplayAfterSuccess(t *testing.T) {
	t.Parallel()
	e := newIdemEnv(t)
	first := e.post(t, "order-123", `{"name": "Replay Ltd", "email": "replay@example.com"}`)
	if first.Status != 201 || first.Body["secret"] != "whsec_shown_once" || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %s", first.Status, first.Raw)
	}
	loc := first.Header.Get("Location")
	if loc != public.Prefix+"/clients/"+first.Body["id"].(string) {
		t.Fatalf("Location %q", loc)
	}
	again := e.post(t, "order-123", "{\n  \"email\":\"replay@example.com\",\"name\":\"Replay Ltd\"}")
	if again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" || again.Header.Get("Location") != loc {
		t.Fatalf("replay: %d %v %s", again.Status, again.Header, again.Raw)
	}
	if _, ok := again.Body["secret"]; ok {
		t.Fatalf("replay carries the secret: %s", again.Raw)
	}
	delete(first.Body, "secret")
	if a, b := mustJSON(t, first.Body), mustJSON(t, again.Body); a != b {
		t.Fatalf("replayed body differs:\n%s\n%s", a, b)
	}
	if again.Header.Get("Request-Id") == first.Header.Get("Request-Id") || again.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("replay headers %v", again.Header)
	}
	if rec, ev := e.written(t, "Replay Ltd"); rec != 1 || ev != 1 || len(e.pub.Events()) != 1 {
		t.Fatalf("records %d, events %d, published %d; want 1, 1, 1", rec, ev, len(e.pub.Events()))
	}

	for range 2 {
		if r := e.post(t, "", map[string]any{"name": "No Key Ltd"}); r.Status != 201 {
			t.Fatalf("without key: %d %s", r.Status, r.Raw)
		}
	}
	if rec, ev := e.written(t, "No Key Ltd"); rec != 2 || ev != 2 {
		t.Fatalf("without a key every POST writes: records %d, events %d", rec, ev)
	}
}

// Spec 4.1: a 4xx answer is stored too, with the handler's writes rolled
// back: the retry gets the same error (same code and fields, in the
// retry's language and with its request id) and nothing is ever written.
func TestIdempotentReplayAfterClientError(t *testing.T) {
	t.Parallel()
	e := newIdemEnv(t)
	for _, tc := range []struct {
		fail, code string
		status     int
	}{
		{"validation", "validation_failed", 422},
		{"after_write", "conflict", 409},
		{"sql_error", "conflict", 409}, // a failed statement inside the write
	} {
		name := "Refused " + tc.fail
		body := map[string]any{"name": name, "fail": tc.fail}
		first := e.post(t, "k-"+tc.fail, body)
		if first.Status != tc.status || first.ErrorCode() != tc.code {
			t.Fatalf("%s: %d %s", tc.fail, first.Status, first.Raw)
		}
		again := e.post(t, "k-"+tc.fail, body, "Accept-Language", "en")
		if again.Status != tc.status || again.ErrorCode() != tc.code || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s replay: %d %s", tc.fail, again.Status, again.Raw)
		}
		env := again.Body["error"].(map[string]any)
		if env["request_id"] != again.Header.Get("Request-Id") || env["message"] == first.Body["error"].(map[string]any)["message"] {
			t.Fatalf("%s replay envelope: %s", tc.fail, again.Raw)
		}
		if a, b := mustJSON(t, errorParams(first)), mustJSON(t, errorParams(again)); a != b {
			t.Fatalf("%s: errors[] %s vs %s", tc.fail, a, b)
		}
		if rec, ev := e.written(t, name); rec != 0 || ev != 0 {
			t.Fatalf("%s: records %d, events %d; want none", tc.fail, rec, ev)
		}
	}
	if len(e.pub.Events()) != 0 {
		t.Fatalf("published %d events for refused writes", len(e.pub.Events()))
	}
}

// Spec 4.1 / issue: a 5xx answer is not stored and its writes roll back,
// so a retry with the key runs again.
func TestIdempotentServerErrorIsNotStored(t *testing.T) {
	t.Parallel()
	e := newIdemEnv(t)
	for range 2 {
		r := e.post(t, "k-500", map[string]any{"name": "Boom Ltd", "fail": "internal"})
		if r.Status != 500 || r.ErrorCode() != "internal_error" || r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	}
	if rec, ev := e.written(t, "Boom Ltd"); rec != 0 || ev != 0 {
		t.Fatalf("records %d, events %d after a 500", rec, ev)
	}
	// A handler that swallows a failed write and answers 201: with or
	// without a key (one write unit either way) the request is a 500 and
	// nothing is kept.
	if r := e.post(t, "", map[string]any{"name": "Boom Ltd", "fail": "swallowed"}); r.Status != 500 {
		t.Fatalf("swallowed without key: %d %s", r.Status, r.Raw)
	}
	if r := e.post(t, "k-swallowed", map[string]any{"name": "Boom Ltd", "fail": "swallowed"}); r.Status != 500 {
		t.Fatalf("swallowed with key: %d %s", r.Status, r.Raw)
	}
	if rec, ev := e.written(t, "Boom Ltd"); rec != 0 || ev != 0 {
		t.Fatalf("records %d, events %d after a swallowed failure", rec, ev)
	}
	// Nothing was stored for the key: another request with it simply runs.
	if r := e.post(t, "k-500", map[string]any{"name": "Boom Ltd"}); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("after 500: %d %s", r.Status, r.Raw)
	}
}

// Spec 4.1: same key with a different body → 422 idempotency_key_reused,
// nothing written; keys are scoped to the company.
func TestIdempotencyKeyReusedWithAnotherRequest(t *testing.T) {
	t.Parallel()
	e := newIdemEnv(t)
	if r := e.post(t, "shared-key", map[string]any{"name": "First Ltd"}); r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	r := e.post(t, "shared-key", map[string]any{"name": "Second Ltd"})
	if r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	// Whatever the other request would have answered.
	for _, fail := range []string{"after_write", "internal", "swallowed"} {
		r := e.post(t, "shared-key", map[string]any{"name": "Second Ltd", "fail": fail})
		if r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" {
			t.Fatalf("%s: %d %s", fail, r.Status, r.Raw)
		}
	}
	if rec, ev := e.written(t, "Second Ltd"); rec != 0 || ev != 0 || len(e.pub.Events()) != 1 {
		t.Fatalf("the reused key wrote: records %d, events %d, published %d", rec, ev, len(e.pub.Events()))
	}
	if n := e.told.count(idempotency.KeyReused); n != 4 || e.told.count(idempotency.Replayed) != 0 {
		t.Errorf("metrics told %d reused keys, %d replays; want 4, 0", n, e.told.count(idempotency.Replayed))
	}
	other := testkit.NewCompany(t, tenant.CompanyInput{})
	r = e.api.Do(t, httpkit.Req{Method: "POST", Path: "/test_writes", Key: other.OwnerKey(t, "clients:create"),
		Body: map[string]any{"name": "Second Ltd"}, Header: map[string]string{public.IdempotencyHeader: "shared-key"}})
	if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("another company's key space: %d %s", r.Status, r.Raw)
	}
}

// Spec 4.1: same key while the first request still runs → 409
// idempotency_in_progress; once it has finished, the replay.
func TestIdempotencyKeyInProgress(t *testing.T) {
	t.Parallel()
	e := newIdemEnv(t)
	body := map[string]any{"name": "Slow Ltd", "block": true}
	done := make(chan *httpkit.Response, 1)
	go func() { done <- e.post(t, "slow", body) }()
	<-e.writes.Entered
	r := e.post(t, "slow", body)
	if r.Status != 409 || r.ErrorCode() != "idempotency_in_progress" {
		t.Fatalf("while running: %d %s", r.Status, r.Raw)
	}
	close(e.writes.Release)
	first := <-done
	if first.Status != 201 {
		t.Fatalf("first: %d %s", first.Status, first.Raw)
	}
	r = e.post(t, "slow", body)
	if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" || r.Body["id"] != first.Body["id"] {
		t.Fatalf("after: %d %s", r.Status, r.Raw)
	}
}

// Issue 3: 100 concurrent requests with one key → exactly one write; every
// other answer is 409 idempotency_in_progress or the replay of that write.
func TestHundredConcurrentRequestsWithOneKeyWriteOnce(t *testing.T) {
	t.Parallel()
	e := newIdemEnv(t)
	const n = 100
	out := make([]*httpkit.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i] = e.post(t, "burst", map[string]any{"name": "Burst Ltd"}) })
	}
	wg.Wait()
	var fresh, replays, busy int
	var id any
	for _, r := range out {
		switch {
		case r.Status == 201 && r.Header.Get("Idempotent-Replayed") == "":
			fresh++
			id = r.Body["id"]
		case r.Status == 201:
			replays++
		case r.Status == 409 && r.ErrorCode() == "idempotency_in_progress":
			busy++
		default:
			t.Fatalf("unexpected answer %d %s", r.Status, r.Raw)
		}
	}
	for _, r := range out {
		if r.Status == 201 && r.Body["id"] != id {
			t.Fatalf("a replay returned another record: %v vs %v", r.Body["id"], id)
		}
	}
	t.Logf("1 write, %d replays, %d in progress", replays, busy)
	if e.told.count(idempotency.Replayed) != replays || e.told.count(idempotency.KeyInProgress) != busy {
		t.Errorf("metrics told %d replays and %d in progress, want %d and %d", e.told.count(idempotency.Replayed),
			e.told.count(idempotency.KeyInProgress), replays, busy)
	}
	if rec, ev := e.written(t, "Burst Ltd"); fresh != 1 || rec != 1 || ev != 1 || len(e.pub.Events()) != 1 {
		t.Fatalf("fresh %d, records %d, events %d, published %d (replays %d, 409s %d)", fresh, rec, ev, len(e.pub.Events()), replays, busy)
	}
}

// Spec 4.1: the response is kept 24 hours; after that the same key creates
// again (injected clock).
func TestIdempotencyRecordExpiresAfter24Hours(t *testing.T) {
	t.Parallel()
	e := newIdemEnv(t)
	body := map[string]any{"name": "Daily Ltd"}
	first := e.post(t, "daily", body)
	e.clock.Advance(24*time.Hour - time.Second)
	if r := e.post(t, "daily", body); r.Header.Get("Idempotent-Replayed") != "true" || r.Body["id"] != first.Body["id"] {
		t.Fatalf("within 24 h: %d %s", r.Status, r.Raw)
	}
	e.clock.Advance(time.Second)
	second := e.post(t, "daily", body)
	if second.Status != 201 || second.Header.Get("Idempotent-Replayed") != "" || second.Body["id"] == first.Body["id"] {
		t.Fatalf("after 24 h: %d %s", second.Status, second.Raw)
	}
	if r := e.post(t, "daily", body); r.Body["id"] != second.Body["id"] {
		t.Fatalf("the new record is replayed in turn: %s", r.Raw)
	}
	if rec, _ := e.written(t, "Daily Ltd"); rec != 2 {
		t.Fatalf("records %d, want 2", rec)
	}
}

// docs/api.md: a key is 1 to 255 printable ASCII characters, sent once;
// anything else is 400 invalid_request and nothing runs.
func TestIdempotencyKeyFormat(t *testing.T) {
	t.Parallel()
	e := newIdemEnv(t)
	for name, key := range map[string]string{
		"empty":     "",
		"too long":  strings.Repeat("k", 256),
		"non-ASCII": "chave-çã",
		"control":   "a\tb",
	} {
		req, err := http.NewRequest("POST", e.api.URL+public.Prefix+"/test_writes", strings.NewReader(`{"name":"Bad Key Ltd"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header[public.IdempotencyHeader] = []string{key}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var env struct{ Error struct{ Code string } }
		_ = json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if resp.StatusCode != 400 || env.Error.Code != "invalid_request" {
			t.Errorf("%s: %d %s", name, resp.StatusCode, env.Error.Code)
		}
	}
	r := e.api.Do(t, httpkit.Req{Method: "POST", Path: "/test_writes", Key: e.key, Body: map[string]any{"name": "Bad Key Ltd"}})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if rec, _ := e.written(t, "Bad Key Ltd"); rec != 1 {
		t.Fatalf("a refused key wrote: %d records", rec)
	}
	if r := e.post(t, strings.Repeat("k", 255)+"", map[string]any{"name": "Long Key Ltd"}); r.Status != 201 {
		t.Fatalf("255 characters: %d %s", r.Status, r.Raw)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 24 item 6: an unclean path (//, /./, /../) is no route: 404
// route_not_found in the envelope, before authentication, idempotency or
// any write, so a write sent there with an Idempotency-Key stores nothing
// and the same key then works on the clean path.
func TestAnUncleanPathIsNoRouteAndLeavesTheIdempotencyKeyUnused(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, "leads:create", "tasks:create")
	for i, p := range []string{"//leads", "/./leads", "/x/../leads", "/leads/.", "//me", "/clients/../leads", "/leads//"} {
		ik := fmt.Sprintf("unclean-%d", i)
		body := map[string]any{"name": "Unclean", "email": fmt.Sprintf("unclean%d@example.com", i), "task": nil}
		for _, method := range []string{"POST", "GET"} {
			r := api.Do(t, httpkit.Req{Method: method, Path: p, Key: key, Body: body, Header: map[string]string{public.IdempotencyHeader: ik}})
			if r.Status != 404 || r.ErrorCode() != "route_not_found" || r.Header.Get("Request-Id") == "" || r.Header.Get("Location") != "" {
				t.Errorf("%s %s: %d %v %s, want 404 route_not_found", method, p, r.Status, r.Header, r.Raw)
			}
		}
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: key, Body: body, Header: map[string]string{public.IdempotencyHeader: ik}})
		if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("POST /leads after %s with the same key: %d %s, want a first 201", p, r.Status, r.Raw)
		}
	}
	if n := countClients(t, co); n != 7 {
		t.Errorf("%d clients, want the 7 captured on the clean path", n)
	}
}

// Issue 24 item 2 (decision 0010): an idempotent answer is bound to the API
// key that made it. Another key of the company sending the same request
// with the same Idempotency-Key — one without read permissions, or a twin
// of the same member with the same permissions — gets 422
// idempotency_key_reused, never the stored answer (rendered for the first
// key's permissions: the lead in full), and nothing is written. The key
// itself and its rotations, either way and through several, get the
// replay; a record made before records were bound to keys replays to none.
func TestAnIdempotentAnswerIsReplayedOnlyToTheKeyThatMadeIt(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	perms := []string{"leads:create", "tasks:create", "clients:read", "tasks:read"}
	maker := co.Key(t, co.Owner, perms...)
	twin := co.Key(t, co.Owner, perms...)
	createOnly := co.OwnerKey(t, "leads:create", "tasks:create")
	body := map[string]any{"name": "Ana Replay", "email": "ana.replay@example.com", "phone": "+55 11 98888-7777", "notes": "after 6pm"}
	post := func(secret, ik string) *httpkit.Response {
		t.Helper()
		return api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: secret, Body: body, Header: map[string]string{public.IdempotencyHeader: ik}})
	}
	first := post(maker.Secret, "lead-1")
	if first.Status != 201 || !strings.Contains(string(first.Raw), "ana.replay@example.com") {
		t.Fatalf("first: %d %s", first.Status, first.Raw)
	}
	for name, secret := range map[string]string{"a key without read permissions": createOnly, "a twin key": twin.Secret} {
		r := post(secret, "lead-1")
		if r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("%s: %d %s, want 422 idempotency_key_reused", name, r.Status, r.Raw)
		}
		if strings.Contains(string(r.Raw), "ana.replay") || strings.Contains(string(r.Raw), "after 6pm") {
			t.Errorf("%s: the answer shows the lead: %s", name, r.Raw)
		}
	}

	var rot, again *tenant.Rotation
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if rot, err = tenant.RotateKey(ctx, tx, maker.ID, time.Hour, time.Now()); err != nil {
			return err
		}
		again, err = tenant.RotateKey(ctx, tx, rot.New.ID, time.Hour, time.Now())
		return err
	})
	for name, secret := range map[string]string{"the key": maker.Secret, "its rotation": rot.New.Secret,
		"the rotation of its rotation": again.New.Secret} {
		r := post(secret, "lead-1")
		if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" || mustJSON(t, r.Body) != mustJSON(t, first.Body) {
			t.Errorf("%s: %d %v %s, want the replay", name, r.Status, r.Header, r.Raw)
		}
	}
	// Made by the newest key, replayed to the one it replaced.
	second := post(again.New.Secret, "lead-2")
	if r := post(rot.New.Secret, "lead-2"); second.Status != 201 || r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("made by the rotation, replayed to the key it replaced: %d, then %d %s", second.Status, r.Status, r.Raw)
	}
	if r := post(createOnly, "lead-2"); r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" {
		t.Errorf("made by a rotation, replayed to another key: %d %s", r.Status, r.Raw)
	}

	// A record without a key (made before the binding) is nobody's.
	fp := idempotency.Fingerprint("POST", public.Prefix+"/leads", nil, mustBody(t, body))
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		now := time.Now()
		return idempotency.Save(ctx, tx, &idempotency.Record{CompanyID: co.Company.ID, Key: "legacy", RequestHash: fp[:],
			Method: "POST", Path: public.Prefix + "/leads", Status: 201, Body: first.Raw, CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	})
	if r := post(maker.Secret, "legacy"); r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" {
		t.Errorf("a record bound to no key: %d %s, want 422 idempotency_key_reused", r.Status, r.Raw)
	}
	if n := countClients(t, co); n != 1 {
		t.Errorf("%d clients, want the one captured first", n)
	}
}

func mustBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
