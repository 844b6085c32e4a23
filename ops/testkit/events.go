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
// (an API without a publisher leaves them there), each once. Each body is
// checked against the OpenAPI webhooks section (CheckWebhook), as a
// receiver would get it.
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
	var rows []streams.OutboxEvent
	l.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().Model(&rows).Where("type <> ?", streams.PingType).Scan(ctx)
	})
	var out []Event
	for _, r := range rows {
		if l.seen[r.ID] {
			continue
		}
		l.seen[r.ID] = true
		CheckWebhook(t, r.Body)
		var ev Event
		if err := json.Unmarshal(r.Body, &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	slices.SortStableFunc(out, func(a, b Event) int { return cmp.Compare(a.Type, b.Type) })
	return out
}

// Types lists the types of evs, in their order.
func Types(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}
