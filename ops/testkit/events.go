package testkit

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"oficina/streams"
)

// Event is a recorded envelope as tests read it.
type Event struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		Object          map[string]any `json:"object"`
		ChangedFields   []string       `json:"changed_fields"`
		ObjectTruncated bool           `json:"object_truncated"`
	} `json:"data"`
}

// EventLog reads the events a company's writes recorded in the outbox
// (an API without a publisher leaves them there): Next each once, All the
// whole history. Each body is checked against the OpenAPI webhooks section
// (CheckWebhook), as a receiver would get it.
type EventLog struct {
	co   *Company
	seen map[string]bool
}

// Events starts reading the company's recorded events.
func (c *Company) Events() *EventLog { return &EventLog{co: c, seen: map[string]bool{}} }

// Next returns the events recorded since the last call, sorted by type
// (the events of one write share their time, so the outbox keeps no order
// among them).
func (l *EventLog) Next(t testing.TB) []Event {
	t.Helper()
	var out []Event
	for _, r := range l.co.recorded(t) {
		if l.seen[r.ID] {
			continue
		}
		l.seen[r.ID] = true
		out = append(out, decodeEvent(t, r.Body))
	}
	slices.SortStableFunc(out, func(a, b Event) int { return cmp.Compare(a.Type, b.Type) })
	return out
}

// All returns every event recorded so far, read by Next or not, oldest
// write first; the events of one write come in no defined order.
func (l *EventLog) All(t testing.TB) []Event {
	t.Helper()
	rows := l.co.recorded(t)
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = decodeEvent(t, r.Body)
	}
	return out
}

// recorded reads the company's events from the outbox (pings aside), oldest
// write first.
func (c *Company) recorded(t testing.TB) []streams.OutboxEvent {
	t.Helper()
	var rows []streams.OutboxEvent
	c.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&rows).Where("type <> ?", streams.PingType).Order("created_at", "id").Scan(ctx)
	})
	return rows
}

// decodeEvent checks a recorded body against the OpenAPI webhooks section,
// as a receiver would get it, and decodes it.
func decodeEvent(t testing.TB, body []byte) Event {
	t.Helper()
	CheckWebhook(t, body)
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// Types lists the types of evs, in their order.
func Types(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}
