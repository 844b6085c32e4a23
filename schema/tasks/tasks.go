// Package tasks holds tasks: follow-up work of a company, optionally about a
// client record and assigned to a member. Lead capture opens them. The GET
// representation is Task; the stored row is Row.
package tasks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/schema/ids"
	"oficina/streams"
	"oficina/tenant"
)

// Limits and defaults (docs/api.md, "Lead capture").
const (
	// MaxTitle bounds a title; it leaves room for the default title
	// ("Entrar em contato com " and a 200-character name).
	MaxTitle = 255
	// MaxDescription bounds a description (the free-text limit).
	MaxDescription = 10000
	// DefaultPriority is the priority of a task that names none.
	DefaultPriority = PriorityMedium
)

// Priorities.
const (
	PriorityLow    = "low"
	PriorityMedium = "medium"
	PriorityHigh   = "high"
	PriorityUrgent = "urgent"
)

// Statuses.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusCanceled   = "canceled"
)

// TaskStatus is a task's status.
type TaskStatus string

// Values are the statuses.
func (TaskStatus) Values() []string {
	return []string{StatusPending, StatusInProgress, StatusCompleted, StatusCanceled}
}

// TaskPriority is a task's priority.
type TaskPriority string

// Values are the priorities.
func (TaskPriority) Values() []string {
	return []string{PriorityLow, PriorityMedium, PriorityHigh, PriorityUrgent}
}

// ValidPriority reports whether p is a priority value.
func ValidPriority(p string) bool {
	return slices.Contains([]string{PriorityLow, PriorityMedium, PriorityHigh, PriorityUrgent}, p)
}

// ValidAssigneeType reports whether t is an assignee type: the team member
// types of part 2.4 (org_member, technician, seller, assistant).
func ValidAssigneeType(t string) bool {
	return slices.Contains([]string{tenant.TypeOrgMember, tenant.TypeTechnician, tenant.TypeSeller, tenant.TypeAssistant}, t)
}

// Row is a stored task.
type Row struct {
	bun.BaseModel `bun:"table:tasks"`

	ID           string     `bun:"id,pk"`
	CompanyID    string     `bun:"company_id"`
	Title        string     `bun:"title"`
	Description  *string    `bun:"description"`
	Status       string     `bun:"status"`
	Priority     string     `bun:"priority"`
	DueDate      *time.Time `bun:"due_date"`
	AssigneeID   *string    `bun:"assignee_id"`
	AssigneeType *string    `bun:"assignee_type"`
	ClientID     *string    `bun:"client_id"`
	StartedAt    *time.Time `bun:"started_at"`
	CompletedAt  *time.Time `bun:"completed_at"`
	CreatedAt    time.Time  `bun:"created_at"`
	UpdatedAt    time.Time  `bun:"updated_at"`
}

// Task is a task as its GET returns it (docs/api.md). The type is named for
// the OpenAPI component it becomes.
type Task struct {
	Object       string                 `json:"object" const:"task"`
	ID           string                 `json:"id"`
	Title        string                 `json:"title"`
	Description  *string                `json:"description"`
	Status       TaskStatus             `json:"status"`
	Priority     TaskPriority           `json:"priority"`
	DueDate      *apitime.Time          `json:"due_date"`
	IsOverdue    bool                   `json:"is_overdue"`
	AssigneeID   *string                `json:"assignee_id"`
	AssigneeType *tenant.TeamMemberType `json:"assignee_type"`
	ClientID     *string                `json:"client_id"`
	StartedAt    *apitime.Time          `json:"started_at"`
	CompletedAt  *apitime.Time          `json:"completed_at"`
	CreatedAt    apitime.Time           `json:"created_at"`
	UpdatedAt    apitime.Time           `json:"updated_at"`
}

// View renders the GET representation at now: is_overdue depends on the
// clock (and changes with time without an event, spec 6.3 rule 7).
func (r *Row) View(now time.Time) Task {
	open := r.Status == StatusPending || r.Status == StatusInProgress
	assigneeType := r.AssigneeType
	if r.AssigneeID == nil {
		assigneeType = nil // the member was deleted: no assignee
	}
	return Task{
		Object: "task", ID: r.ID, Title: r.Title, Description: r.Description, Status: TaskStatus(r.Status), Priority: TaskPriority(r.Priority),
		DueDate: timePtr(r.DueDate), IsOverdue: open && r.DueDate != nil && r.DueDate.Before(now),
		AssigneeID: r.AssigneeID, AssigneeType: (*tenant.TeamMemberType)(assigneeType), ClientID: r.ClientID,
		StartedAt: timePtr(r.StartedAt), CompletedAt: timePtr(r.CompletedAt),
		CreatedAt: apitime.At(r.CreatedAt), UpdatedAt: apitime.At(r.UpdatedAt),
	}
}

func timePtr(t *time.Time) *apitime.Time {
	if t == nil {
		return nil
	}
	v := apitime.At(*t)
	return &v
}

// TaskCreate opens a task.
type TaskCreate struct {
	Title        string
	Description  *string
	Priority     string // "" means DefaultPriority
	DueDate      *time.Time
	AssigneeID   *string // with AssigneeType, or neither
	AssigneeType *string
	ClientID     *string
}

// Check adds the input's field errors to f, naming each field with prefix
// (lead capture validates its task object as "task.…").
func (in *TaskCreate) Check(f *apierr.Fields, prefix string) {
	switch n := utf8.RuneCountInString(strings.TrimSpace(in.Title)); {
	case n == 0:
		f.Add(prefix+"title", apierr.Required)
	case n > MaxTitle:
		f.Add(prefix+"title", apierr.TooLong)
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > MaxDescription {
		f.Add(prefix+"description", apierr.TooLong)
	}
	if in.Priority != "" && !ValidPriority(in.Priority) {
		f.Add(prefix+"priority", apierr.InvalidValue)
	}
	switch {
	case in.AssigneeID != nil && in.AssigneeType == nil:
		f.Add(prefix+"assignee_type", apierr.Required)
	case in.AssigneeID == nil && in.AssigneeType != nil:
		f.Add(prefix+"assignee_id", apierr.Required)
	case in.AssigneeType != nil && !ValidAssigneeType(*in.AssigneeType):
		f.Add(prefix+"assignee_type", apierr.InvalidValue)
	}
}

// CheckAssignee verifies that the assignee is an active member of the
// transaction's company with that type; anything else is 404
// resource_not_found (the pair names the member, as an id names a record).
// No assignee is fine: the task is unassigned.
func CheckAssignee(ctx context.Context, tx bun.IDB, id, typ *string) error {
	if id == nil || typ == nil {
		return nil
	}
	if !ids.Valid("mem", *id) {
		return apierr.New(apierr.ResourceNotFound)
	}
	n, err := tx.NewSelect().Table("members").
		Where("id = ?", *id).Where("type = ?", *typ).Where("status = 'active'").Count(ctx)
	if err != nil {
		return fmt.Errorf("tasks: assignee: %w", err)
	}
	if n == 0 {
		return apierr.New(apierr.ResourceNotFound)
	}
	return nil
}

// Open opens a task in w's company, leaving the task.created change to the
// caller, who records it together with the other events of its write (one outbox statement).
// The assignee must have been checked with CheckAssignee. The row is
// inserted with the write's COMMIT (streams.Write.Later): the write must
// not read it back.
func Open(ctx context.Context, w *streams.Write, in TaskCreate) (*Row, streams.Change, error) {
	var f apierr.Fields
	in.Check(&f, "")
	if err := f.Err(); err != nil {
		return nil, streams.Change{}, err
	}
	r := &Row{
		ID: ids.New("tsk"), CompanyID: w.CompanyID, Title: strings.TrimSpace(in.Title), Description: in.Description,
		Status: StatusPending, Priority: in.Priority, DueDate: in.DueDate,
		AssigneeID: in.AssigneeID, AssigneeType: in.AssigneeType, ClientID: in.ClientID,
		CreatedAt: w.At, UpdatedAt: w.At,
	}
	if r.Priority == "" {
		r.Priority = DefaultPriority
	}
	// Nothing references a new task, so the row travels with COMMIT.
	if err := w.Later(ctx, w.Tx.NewInsert().Model(r)); err != nil {
		return nil, streams.Change{}, fmt.Errorf("tasks: create: %w", err)
	}
	return r, streams.Change{Type: EventCreated, Object: r.View(w.At)}, nil
}

// Get reads a task of the transaction's company; another company's id is
// 404 resource_not_found.
func Get(ctx context.Context, tx bun.IDB, id string) (*Row, error) {
	return get(ctx, tx, id, false)
}

// get reads a task, locked for the write when forUpdate.
func get(ctx context.Context, tx bun.IDB, id string, forUpdate bool) (*Row, error) {
	r, err := db.ByID[Row](ctx, tx, "tsk", id, forUpdate)
	if err != nil {
		return nil, err
	}
	return r, nil
}
