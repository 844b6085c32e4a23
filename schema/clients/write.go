package clients

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/schema/field"
	"oficina/streams"
)

// ClientUpdate changes a client (dashboard action): omitted fields stay, null
// clears a nullable field. Name and status cannot be cleared.
type ClientUpdate struct {
	Name              field.Opt[string]       `json:"name"`
	Email             field.Opt[string]       `json:"email" api:"nullable"`
	Phone             field.Opt[string]       `json:"phone" api:"nullable"`
	Document          field.Opt[string]       `json:"document" api:"nullable"`
	Status            field.Opt[string]       `json:"status"`
	Source            field.Opt[string]       `json:"source" api:"nullable"`
	Notes             field.Opt[string]       `json:"notes"`
	BirthDate         field.Opt[apitime.Date] `json:"birth_date" api:"nullable"`
	NextFollowUp      field.Opt[apitime.Time] `json:"next_follow_up" api:"nullable"`
	LastInteractionAt field.Opt[apitime.Time] `json:"last_interaction_at" api:"nullable"`
}

func (p *ClientUpdate) apply(c *Row, f *apierr.Fields) {
	if p.Name.Set {
		c.Name = trimmed(p.Name.Ptr())
		checkName(f, "name", c.Name, true)
	}
	if p.Status.Set {
		if p.Status.Null || !validStatus(p.Status.Value) {
			f.Add("status", apierr.InvalidValue)
		}
		c.Status = p.Status.Value
	}
	if p.Notes.Set {
		c.Notes = p.Notes.Value // null clears to ""
		if utf8.RuneCountInString(c.Notes) > MaxText {
			f.Add("notes", apierr.TooLong)
		}
	}
	if p.Email.Set {
		c.setEmail(f, p.Email.Ptr())
	}
	if p.Phone.Set {
		c.setPhone(f, p.Phone.Ptr())
	}
	if p.Document.Set {
		c.Document = shortText(f, "document", p.Document.Ptr())
	}
	if p.Source.Set {
		c.Source = shortText(f, "source", p.Source.Ptr())
	}
	if p.BirthDate.Set {
		c.BirthDate = p.BirthDate.Ptr()
	}
	if p.NextFollowUp.Set {
		c.NextFollowUp = stdTime(p.NextFollowUp.Ptr())
	}
	if p.LastInteractionAt.Set {
		c.LastInteractionAt = stdTime(p.LastInteractionAt.Ptr())
	}
}

func trimmed(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}

func stdTime(t *apitime.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.Time
	return &v
}

// Update changes a client as one write of w and records client.updated with
// the fields that changed (none changed: no event). A contact that belongs
// to another record is 409 conflict.
func Update(ctx context.Context, w *streams.Write, id string, p ClientUpdate) (*Row, error) {
	c, err := getForUpdate(ctx, w.Tx, id)
	if err != nil {
		return nil, err
	}
	before, err := streams.Snap(c.View())
	if err != nil {
		return nil, err
	}
	var f apierr.Fields
	p.apply(c, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	fields, err := before.Changed(c.View())
	if err != nil || len(fields) == 0 {
		return c, err // nothing changed: no write, no event (spec 6.3 rule 3)
	}
	c.UpdatedAt = w.At
	if _, err := w.Tx.NewUpdate().Model(c).WherePK().Exec(ctx); err != nil {
		if db.IsUniqueViolation(err) {
			return nil, apierr.Wrap(apierr.Conflict, err)
		}
		return nil, fmt.Errorf("clients: update: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventUpdated, Object: c.View(), ChangedFields: fields}); err != nil {
		return nil, err
	}
	return c, nil
}

// Delete removes a client as one write of w and records client.deleted with
// the record as it was. Its tasks (and quotes) stay, unlinked by the
// database (ON DELETE SET NULL) without events of their own (spec 6.3
// rule 7).
func Delete(ctx context.Context, w *streams.Write, id string) (*Row, error) {
	c, err := getForUpdate(ctx, w.Tx, id)
	if err != nil {
		return nil, err
	}
	if _, err := w.Tx.NewDelete().Model(c).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("clients: delete: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventDeleted, Object: c.View()}); err != nil {
		return nil, err
	}
	return c, nil
}

func getForUpdate(ctx context.Context, tx bun.IDB, id string) (*Row, error) {
	return db.ByID[Row](ctx, tx, "cli", id, true)
}
