package public_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"oficina/http/sse"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// sseMessage is one message of GET /events/stream.
type sseMessage struct{ id, event, data string }

// openStream opens GET /events/stream with key (and Last-Event-ID when
// last is set) and returns its messages as they arrive.
func openStream(t *testing.T, api *httpkit.API, key, query, last string) (<-chan sseMessage, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", api.URL+"/public/v1/events/stream"+query, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan sseMessage, 64)
	go func() {
		defer close(out)
		_ = sse.Read(resp.Body, func(m sse.Message) error {
			out <- sseMessage{m.ID, m.Event, m.Data}
			return nil
		})
	}()
	return out, func() { cancel(); _ = resp.Body.Close() }
}

func position(t *testing.T, id string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		t.Fatalf("message id %q: %v", id, err)
	}
	return n
}

func nextMessage(t *testing.T, ms <-chan sseMessage) sseMessage {
	t.Helper()
	select {
	case m, ok := <-ms:
		if !ok {
			t.Fatal("the stream ended")
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10 s")
	}
	return sseMessage{}
}

// Issue 26 item 4: GET /events/stream sends each event of the company as it
// is published — the envelope as webhooks carry it, the event's type, its
// stream position as id — trimmed to the modules the key may read; a client
// that reconnects with Last-Event-ID gets what it missed, first and once.
func TestTheEventStreamResumesFromTheLastEventID(t *testing.T) {
	t.Parallel()
	js := testkit.JetStream(t, jsconfig.Config{})
	api := httpkit.NewAPI(t, httpkit.APIOptions{Events: js, Publisher: streams.NewPublisher(testkit.DB(t), js, nil)})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	other := testkit.NewCompany(t, tenant.CompanyInput{})
	writer := co.OwnerKey(t, "leads:create", "tasks:create", "clients:read")
	listener := co.OwnerKey(t, "events:read", "clients:read") // no tasks:read: task.created is not sent
	lead := func(co *testkit.Company, key, name string) string {
		r := api.Do(t, httpkit.Req{Method: "POST", Path: "/leads", Key: key, Body: map[string]any{"name": name, "phone": "+55 11 91234-" + name}})
		if r.Status != 201 {
			t.Fatalf("lead: %d %s", r.Status, r.Raw)
		}
		return r.Body["lead"].(map[string]any)["id"].(string)
	}

	ms, stop := openStream(t, api, listener, "", "")
	// Another company's events are not this stream's.
	lead(other, other.OwnerKey(t, "leads:create", "tasks:create", "clients:read"), "0001")
	first := lead(co, writer, "0002")
	m := nextMessage(t, ms)
	var env struct {
		Type string `json:"type"`
		Data struct {
			Object struct{ ID string } `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(m.data), &env); err != nil || m.event != "client.created" || env.Type != "client.created" ||
		env.Data.Object.ID != first || m.id == "" {
		t.Fatalf("first message %+v (%v), want client.created of %s", m, err, first)
	}
	stop()

	// Missed while away, then resumed after the last id received.
	missed := lead(co, writer, "0003")
	ms, stop = openStream(t, api, listener, "", m.id)
	defer stop()
	if m2 := nextMessage(t, ms); m2.event != "client.created" || !strings.Contains(m2.data, missed) || position(t, m2.id) <= position(t, m.id) {
		t.Fatalf("after resuming: %+v, want the missed client.created of %s", m2, missed)
	}
	live := lead(co, writer, "0004")
	if m3 := nextMessage(t, ms); !strings.Contains(m3.data, live) {
		t.Fatalf("live after resuming: %+v, want %s", m3, live)
	}

	for _, tc := range []struct{ name, query, last string }{
		{"a bad Last-Event-ID", "", "evt_1"}, {"an unknown parameter", "?created_after=2026-01-01T00:00:00Z", ""},
		{"an unknown type", "?type=nope", ""}, {"a broken escape", "?type=%zz", ""},
		{"more members than Go parses", "?" + strings.Repeat("type=sale.paid&", 10001), ""},
	} {
		req, _ := http.NewRequest("GET", api.URL+"/public/v1/events/stream"+tc.query, nil)
		req.Header.Set("Authorization", "Bearer "+listener)
		if tc.last != "" {
			req.Header.Set("Last-Event-ID", tc.last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("%s: %d, want 400", tc.name, resp.StatusCode)
		}
	}
}

// Without JetStream (serve with no NATS) the stream is 503, in the
// envelope, and the rest of the API answers.
func TestTheEventStreamWithoutNATSIsUnavailable(t *testing.T) {
	t.Parallel()
	e := httpkit.NewEnv(t, httpkit.APIOptions{}, "events:read")
	if r := e.Do(t, "GET", "/events/stream", nil); r.Status != 503 || r.ErrorCode() != "service_unavailable" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
}
