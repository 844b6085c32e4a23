package tasks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/clients"
	"oficina/schema/field"
	"oficina/streams"
)

// TaskUpdate changes a task (dashboard action): an omitted field stays, null
// clears a field that may be empty (description, due_date, the assignee
// pair, client_id: the members the task shows as null, decision 16) and is
// 422 invalid_value on one that may not (title, status, priority).
type TaskUpdate struct {
	Title        field.Opt[string]       `json:"title"`
	Description  field.Opt[string]       `json:"description" api:"nullable"`
	Status       field.Opt[string]       `json:"status"`
	Priority     field.Opt[string]       `json:"priority"`
	DueDate      field.Opt[apitime.Time] `json:"due_date" api:"nullable"`
	AssigneeID   field.Opt[string]       `json:"assignee_id" api:"nullable"`
	AssigneeType field.Opt[string]       `json:"assignee_type" api:"nullable"`
	ClientID     field.Opt[string]       `json:"client_id" api:"nullable"`
}

// ValidStatus reports whether s is a task status.
func ValidStatus(s string) bool {
	return slices.Contains([]string{StatusPending, StatusInProgress, StatusCompleted, StatusCanceled}, s)
}

// apply changes r as the patch says, collecting field errors in f.
func (p *TaskUpdate) apply(r *Row, f *apierr.Fields, now time.Time) {
	if p.Title.Set {
		r.Title = strings.TrimSpace(p.Title.Value)
		switch n := utf8.RuneCountInString(r.Title); {
		case p.Title.Null:
			f.Add("title", apierr.InvalidValue)
		case n == 0:
			f.Add("title", apierr.Required)
		case n > MaxTitle:
			f.Add("title", apierr.TooLong)
		}
	}
	if p.Description.Set {
		r.Description = p.Description.Ptr()
		if r.Description != nil && utf8.RuneCountInString(*r.Description) > MaxDescription {
			f.Add("description", apierr.TooLong)
		}
	}
	if p.Priority.Set {
		if p.Priority.Null || !ValidPriority(p.Priority.Value) {
			f.Add("priority", apierr.InvalidValue)
		}
		r.Priority = p.Priority.Value
	}
	if p.Status.Set {
		if p.Status.Null || !ValidStatus(p.Status.Value) {
			f.Add("status", apierr.InvalidValue)
		}
		r.setStatus(p.Status.Value, now)
	}
	if p.DueDate.Set {
		r.DueDate = nil
		if v := p.DueDate.Ptr(); v != nil {
			t := v.Time
			r.DueDate = &t
		}
	}
	if p.AssigneeID.Set || p.AssigneeType.Set {
		if p.AssigneeID.Set {
			r.AssigneeID = p.AssigneeID.Ptr()
		}
		if p.AssigneeType.Set {
			r.AssigneeType = p.AssigneeType.Ptr()
		}
		switch {
		case r.AssigneeID != nil && r.AssigneeType == nil:
			f.Add("assignee_type", apierr.Required)
		case r.AssigneeID == nil && r.AssigneeType != nil:
			if p.AssigneeID.Set {
				r.AssigneeType = nil // clearing the member clears the pair
			} else {
				f.Add("assignee_id", apierr.Required)
			}
		case r.AssigneeType != nil && !ValidAssigneeType(*r.AssigneeType):
			f.Add("assignee_type", apierr.InvalidValue)
		}
	}
	if p.ClientID.Set {
		r.ClientID = p.ClientID.Ptr()
	}
}

// setStatus moves the task to status: in_progress stamps started_at (once),
// completed stamps completed_at, leaving completed clears it.
func (r *Row) setStatus(status string, now time.Time) {
	if status == r.Status {
		return
	}
	r.Status = status
	switch status {
	case StatusInProgress:
		if r.StartedAt == nil {
			r.StartedAt = &now
		}
		r.CompletedAt = nil
	case StatusCompleted:
		r.CompletedAt = &now
	default:
		r.CompletedAt = nil
	}
}

// Update changes a task as one write of w and records task.updated with the
// fields that changed; a write that changes nothing records nothing (spec
// 6.3 rule 3). An assignee or client of another company is 404.
func Update(ctx context.Context, w *streams.Write, id string, p TaskUpdate) (*Row, error) {
	r, err := get(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	before, err := streams.Snap(r.View(w.At))
	if err != nil {
		return nil, err
	}
	var f apierr.Fields
	p.apply(r, &f, w.At)
	if err := f.Err(); err != nil {
		return nil, err
	}
	if p.AssigneeID.Set || p.AssigneeType.Set {
		if err := CheckAssignee(ctx, w.Tx, r.AssigneeID, r.AssigneeType); err != nil {
			return nil, err
		}
	}
	if r.ClientID != nil && p.ClientID.Set {
		if _, err := clients.Get(ctx, w.Tx, *r.ClientID); err != nil {
			return nil, err
		}
	}
	fields, err := before.Changed(r.View(w.At))
	if err != nil || len(fields) == 0 {
		return r, err // nothing changed: no write, no event
	}
	r.UpdatedAt = w.At
	if _, err := w.Tx.NewUpdate().Model(r).ExcludeColumn("id", "company_id", "created_at").WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("tasks: update: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventUpdated, Object: r.View(w.At), ChangedFields: fields}); err != nil {
		return nil, err
	}
	return r, nil
}

// Delete removes a task as one write of w and records task.deleted with the
// task as it was.
func Delete(ctx context.Context, w *streams.Write, id string) (*Row, error) {
	r, err := get(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	if _, err := w.Tx.NewDelete().Model(r).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("tasks: delete: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventDeleted, Object: r.View(w.At)}); err != nil {
		return nil, err
	}
	return r, nil
}
