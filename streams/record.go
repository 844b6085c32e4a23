package streams

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/streams/envelope"
)

// ActorKind says who made a write; some kinds always yield summarized
// events (spec 6.3 rule 5).
type ActorKind string

// Actor kinds.
const (
	ActorAPI        ActorKind = "api"
	ActorDashboard  ActorKind = "dashboard"
	ActorAutomation ActorKind = "automation"
	ActorAssistant  ActorKind = "assistant"
	ActorBankImport ActorKind = "bank_import"
	ActorRoutine    ActorKind = "routine"
)

// Actor is who made a write.
type Actor struct {
	Kind     ActorKind
	MemberID string
	KeyID    string
}

// AlwaysSummarized reports the writers whose events carry only object and id.
func (a Actor) AlwaysSummarized() bool {
	switch a.Kind {
	case ActorAutomation, ActorAssistant, ActorBankImport, ActorRoutine:
		return true
	}
	return false
}

// Write is the context of one write.
type Write struct {
	CompanyID string
	Actor     Actor
	At        time.Time // when the fact happened
}

// Change is one event of a write.
type Change struct {
	// Type is the event name, e.g. "service_order.updated".
	Type string
	// Object is the resource exactly as its GET returns it at this moment
	// (it marshals to a JSON object with "object" and "id").
	Object any
	// Before is, for ".updated" events, the GET representation before the
	// write; changed_fields is computed from it and a write that changed
	// nothing yields no ".updated".
	Before any
	// ChangedFields, when set, is used instead of diffing Before and Object
	// (e.g. status_changed + updated from one write share one list).
	ChangedFields []string
}

// Recorded is an event stored by Record.
type Recorded struct {
	ID        string
	CompanyID string
	Type      string
	Body      []byte
}

// OutboxEvent is a row of event_outbox.
type OutboxEvent struct {
	bun.BaseModel `bun:"table:event_outbox"`

	ID          string     `bun:"id,pk"`
	CompanyID   string     `bun:"company_id"`
	Type        string     `bun:"type"`
	Body        []byte     `bun:"body"`
	OccurredAt  time.Time  `bun:"occurred_at"`
	PublishedAt *time.Time `bun:"published_at"`
	CreatedAt   time.Time  `bun:"created_at"`
}

// Record stores the events of one write in tx (the write's own company
// transaction). ".updated" changes that change nothing are skipped.
func Record(ctx context.Context, tx bun.IDB, w Write, changes ...Change) ([]Recorded, error) {
	var out []Recorded
	for _, c := range changes {
		obj, err := json.Marshal(c.Object)
		if err != nil {
			return nil, fmt.Errorf("streams: %s: marshal object: %w", c.Type, err)
		}
		fields := c.ChangedFields
		if envelope.IsUpdate(c.Type) && fields == nil {
			before, err := json.Marshal(c.Before)
			if err != nil {
				return nil, fmt.Errorf("streams: %s: marshal before: %w", c.Type, err)
			}
			if fields, err = envelope.ChangedFields(before, obj); err != nil {
				return nil, fmt.Errorf("streams: %s: %w", c.Type, err)
			}
		}
		if envelope.IsUpdate(c.Type) && len(fields) == 0 {
			continue // spec 6.3 rule 3
		}
		summarized := w.Actor.AlwaysSummarized()
		if summarized {
			fields = []string{}
		}
		ev, body, err := envelope.Build(envelope.Params{
			Type: c.Type, OrganizationID: w.CompanyID, OccurredAt: w.At,
			Object: obj, ChangedFields: fields, Summarize: summarized,
		})
		if err != nil {
			return nil, fmt.Errorf("streams: %s: %w", c.Type, err)
		}
		row := &OutboxEvent{ID: ev.ID, CompanyID: w.CompanyID, Type: c.Type, Body: body, OccurredAt: w.At.UTC(), CreatedAt: time.Now()}
		if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
			return nil, fmt.Errorf("streams: record %s: %w", c.Type, err)
		}
		out = append(out, Recorded{ID: ev.ID, CompanyID: w.CompanyID, Type: c.Type, Body: body})
	}
	collect(ctx, out)
	return out, nil
}
