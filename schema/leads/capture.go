package leads

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"oficina/schema/apierr"
	"oficina/schema/clients"
	"oficina/schema/tasks"
	"oficina/streams"
)

// Rules of a capture (docs/api.md, "Lead capture").
const (
	// DefaultDue is when the default task falls due, from the capture.
	DefaultDue = 24 * time.Hour
	// MaxDueInHours bounds due_in_hours (one year).
	MaxDueInHours = 24 * 366
	// defaultTitle is the spec's fixed Portuguese "get in touch with" phrase
	// followed by the record's name.
	defaultTitle = "Entrar em contato com "
)

// DefaultTitle is the title of a task that names none.
func DefaultTitle(name string) string { return defaultTitle + name }

// Plan is a validated capture, ready to run in a transaction.
type Plan struct {
	client *clients.Row      // stored when the contact is new
	task   *tasks.TaskCreate // nil: no task; empty Title: the default one
	dueIn  time.Duration     // when not zero, the task falls due this long after the capture
}

// Validate checks a request and reports every invalid field at once, the
// task's as "task.<field>". Times are taken when the plan runs.
func Validate(r LeadCaptureCreate, companyID string) (*Plan, error) {
	var f apierr.Fields
	name := ""
	if r.Name != nil {
		name = *r.Name
	}
	status := clients.StatusLead
	c := clients.Build(companyID, clients.ClientCreate{Name: name, Email: r.Email, Phone: r.Phone, Status: &status,
		Source: r.Source, Notes: r.Notes}, time.Time{}, &f)
	if blank(r.Email) && blank(r.Phone) {
		f.Add("email", apierr.Required)
		f.Add("phone", apierr.Required)
	}
	p := &Plan{client: c}
	if r.OpensTask() {
		t, _ := r.Task.Object()
		p.task, p.dueIn = taskInput(t, &f)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

func blank(s *string) bool { return s == nil || strings.TrimSpace(*s) == "" }

// taskInput turns the task object (zero for the default task) into a
// tasks.TaskCreate.
func taskInput(t LeadTask, f *apierr.Fields) (*tasks.TaskCreate, time.Duration) {
	in := &tasks.TaskCreate{Description: t.Description, AssigneeID: t.AssigneeID, AssigneeType: (*string)(t.AssigneeType)}
	if t.Priority != nil {
		in.Priority = string(*t.Priority)
		if in.Priority == "" {
			f.Add("task.priority", apierr.InvalidValue)
		}
	}
	dueIn := DefaultDue
	switch {
	case t.DueInHours != nil && t.DueAt != nil:
		f.Add("task.due_at", apierr.NotAllowed)
	case t.DueInHours != nil:
		if *t.DueInHours < 1 || *t.DueInHours > MaxDueInHours {
			f.Add("task.due_in_hours", apierr.OutOfRange)
		}
		dueIn = time.Duration(*t.DueInHours) * time.Hour
	case t.DueAt != nil:
		due := t.DueAt.Time
		in.DueDate, dueIn = &due, 0
	}
	// Check the title as sent; an omitted one is filled at capture time
	// with the record's name, which dedup may change.
	check := *in
	check.Title = "-"
	if t.Title != nil {
		in.Title = strings.TrimSpace(*t.Title)
		check.Title = *t.Title
	}
	check.Check(f, "task.")
	return in, dueIn
}

// LeadCapture is the answer of POST /leads (spec 2.7). The type is named for
// its OpenAPI component.
type LeadCapture struct {
	Object       string         `json:"object" const:"lead_capture"`
	Lead         clients.Client `json:"lead" api:"summarizable"`
	Task         *tasks.Task    `json:"task" api:"summarizable"`
	Deduplicated bool           `json:"deduplicated"`

	summarized bool
}

// Summarized returns the answer for a caller who may not read the record:
// lead and task with only object and id.
func (c LeadCapture) Summarized() LeadCapture {
	c.summarized = true
	return c
}

type ref struct {
	Object string `json:"object"`
	ID     string `json:"id"`
}

// MarshalJSON renders the answer, summarised when asked.
func (c LeadCapture) MarshalJSON() ([]byte, error) {
	type full LeadCapture
	if !c.summarized {
		return json.Marshal(full(c))
	}
	out := struct {
		Object       string `json:"object"`
		Lead         ref    `json:"lead"`
		Task         *ref   `json:"task"`
		Deduplicated bool   `json:"deduplicated"`
	}{Object: c.Object, Lead: ref{c.Lead.Object, c.Lead.ID}, Deduplicated: c.Deduplicated}
	if c.Task != nil {
		out.Task = &ref{c.Task.Object, c.Task.ID}
	}
	return json.Marshal(out)
}

// Run performs a validated capture as one write of w: it checks the
// assignee before writing anything, reuses the record holding the e-mail or
// phone (overwriting nothing) or creates a lead record (client.created), and
// opens the task (task.created) linked to the record.
func Run(ctx context.Context, w *streams.Write, p *Plan) (*LeadCapture, error) {
	if p.task != nil {
		if err := tasks.CheckAssignee(ctx, w.Tx, p.task.AssigneeID, p.task.AssigneeType); err != nil {
			return nil, err
		}
	}
	c := *p.client
	c.CreatedAt, c.UpdatedAt = w.At, w.At
	rec, created, err := clients.InsertOrFind(ctx, w.Tx, &c)
	if err != nil {
		return nil, err
	}
	out := &LeadCapture{Object: "lead_capture", Lead: rec.View(), Deduplicated: !created}
	var changes []streams.Change
	if created {
		changes = append(changes, streams.Change{Type: clients.EventCreated, Object: out.Lead})
	}
	if p.task != nil {
		in := *p.task
		in.ClientID = &rec.ID
		if in.Title == "" {
			in.Title = DefaultTitle(rec.Name)
		}
		// Without a description the lead's notes describe the task, so the
		// follow-up keeps the message even when the record is reused.
		if in.Description == nil && strings.TrimSpace(p.client.Notes) != "" {
			notes := p.client.Notes
			in.Description = &notes
		}
		if p.dueIn != 0 {
			due := w.At.Add(p.dueIn).UTC().Truncate(time.Second)
			in.DueDate = &due
		}
		row, change, err := tasks.Open(ctx, w, in)
		if err != nil {
			return nil, err
		}
		v := row.View(w.At)
		out.Task = &v
		changes = append(changes, change)
	}
	if _, err := streams.Record(ctx, w, changes...); err != nil {
		return nil, fmt.Errorf("leads: %w", err)
	}
	return out, nil
}
