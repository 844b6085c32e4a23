// Package appointments holds calendar appointments and their mirrors to the
// external calendars members connected (Google, Outlook, CalDAV). Creating an
// appointment records one pending mirror per connected calendar of the people
// involved; a calendar sync worker pushes them after commit (none ships yet:
// the rows are the contract). The public API has no appointment routes; the
// spec's appointment state machine is only fragments (3.1).
package appointments

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/schema/ids"
)

// StatusScheduled is the status of a new appointment.
const StatusScheduled = "scheduled"

// DefaultDuration is the length of an appointment created without an end.
const DefaultDuration = time.Hour

// Row is a calendar entry.
type Row struct {
	bun.BaseModel `bun:"table:appointments"`

	ID             string    `bun:"id,pk"`
	CompanyID      string    `bun:"company_id"`
	Title          string    `bun:"title"`
	Status         string    `bun:"status"`
	StartsAt       time.Time `bun:"starts_at"`
	EndsAt         time.Time `bun:"ends_at"`
	ServiceOrderID *string   `bun:"service_order_id"`
	ClientID       *string   `bun:"client_id"`
	MemberIDs      []string  `bun:"member_ids,array"`
	PriceCents     *int64    `bun:"price_cents"`
	CreatedBy      *string   `bun:"created_by"`
	CreatedAt      time.Time `bun:"created_at"`
	UpdatedAt      time.Time `bun:"updated_at"`
}

// MirrorRow is the copy of an appointment to push to one connected calendar.
type MirrorRow struct {
	bun.BaseModel `bun:"table:appointment_calendar_mirrors"`

	ID                 string     `bun:"id,pk" json:"id"`
	CompanyID          string     `bun:"company_id" json:"-"`
	AppointmentID      string     `bun:"appointment_id" json:"appointment_id"`
	ConnectionID       string     `bun:"connection_id" json:"connection_id"`
	MemberID           string     `bun:"member_id" json:"member_id"`
	Provider           string     `bun:"provider" json:"provider"`
	ExternalCalendarID string     `bun:"external_calendar_id" json:"external_calendar_id"`
	Status             string     `bun:"status" json:"status"`
	ExternalEventID    *string    `bun:"external_event_id" json:"external_event_id"`
	CreatedAt          time.Time  `bun:"created_at" json:"created_at"`
	SyncedAt           *time.Time `bun:"synced_at" json:"synced_at"`
}

// Appointment is an appointment as the admin API shows it (with its mirrors).
type Appointment struct {
	Object         string       `json:"object" const:"appointment"`
	ID             string       `json:"id"`
	Title          string       `json:"title"`
	Status         string       `json:"status"`
	StartsAt       apitime.Time `json:"starts_at"`
	EndsAt         apitime.Time `json:"ends_at"`
	ServiceOrderID *string      `json:"service_order_id"`
	ClientID       *string      `json:"client_id"`
	MemberIDs      []string     `json:"member_ids"`
	PriceCents     *int64       `json:"price_cents"`
	Mirrors        []MirrorRow  `json:"mirrors"`
	CreatedAt      apitime.Time `json:"created_at"`
	UpdatedAt      apitime.Time `json:"updated_at"`
}

// AppointmentCreate creates an appointment.
type AppointmentCreate struct {
	ID             string // optional: pre-allocated id (the order links to it)
	Title          string
	StartsAt       time.Time
	EndsAt         *time.Time // nil: StartsAt + DefaultDuration
	ServiceOrderID *string
	ClientID       *string
	// MemberIDs are the people in the appointment (technicians); with
	// CreatedBy they are the ones whose connected calendars get a mirror.
	MemberIDs  []string
	CreatedBy  *string
	PriceCents *int64
}

// Create stores an appointment and one pending mirror per active connected
// calendar of its members and its creator.
func Create(ctx context.Context, tx bun.IDB, companyID string, in AppointmentCreate, now time.Time) (*Row, []MirrorRow, error) {
	a := &Row{ID: in.ID, CompanyID: companyID, Title: in.Title, Status: StatusScheduled,
		StartsAt: in.StartsAt.UTC(), EndsAt: in.StartsAt.UTC().Add(DefaultDuration), ServiceOrderID: in.ServiceOrderID,
		ClientID: in.ClientID, MemberIDs: in.MemberIDs, PriceCents: in.PriceCents, CreatedBy: in.CreatedBy,
		CreatedAt: now, UpdatedAt: now}
	if a.ID == "" {
		a.ID = ids.New("apt")
	}
	if in.EndsAt != nil {
		a.EndsAt = in.EndsAt.UTC()
	}
	if a.MemberIDs == nil {
		a.MemberIDs = []string{}
	}
	if _, err := tx.NewInsert().Model(a).Exec(ctx); err != nil {
		return nil, nil, fmt.Errorf("appointments: create: %w", err)
	}
	people := slices.Clone(a.MemberIDs)
	if in.CreatedBy != nil && !slices.Contains(people, *in.CreatedBy) {
		people = append(people, *in.CreatedBy)
	}
	mirrors, err := mirror(ctx, tx, a, people, now)
	if err != nil {
		return nil, nil, err
	}
	return a, mirrors, nil
}

// mirror records a pending copy for each active connection of people.
func mirror(ctx context.Context, tx bun.IDB, a *Row, people []string, now time.Time) ([]MirrorRow, error) {
	if len(people) == 0 {
		return []MirrorRow{}, nil
	}
	var conns []Connection
	if err := tx.NewSelect().Model(&conns).Where("active").Where("member_id IN (?)", bun.List(people)).
		Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("appointments: connections: %w", err)
	}
	out := make([]MirrorRow, len(conns))
	for i, c := range conns {
		out[i] = MirrorRow{ID: ids.New("acm"), CompanyID: a.CompanyID, AppointmentID: a.ID, ConnectionID: c.ID,
			MemberID: c.MemberID, Provider: c.Provider, ExternalCalendarID: c.ExternalCalendarID,
			Status: "pending", CreatedAt: now}
	}
	if len(out) > 0 {
		if _, err := tx.NewInsert().Model(&out).Exec(ctx); err != nil {
			return nil, fmt.Errorf("appointments: mirrors: %w", err)
		}
	}
	return out, nil
}

// Get reads an appointment with its mirrors.
func Get(ctx context.Context, tx bun.IDB, id string) (Appointment, error) {
	a, err := db.ByID[Row](ctx, tx, "apt", id, false)
	if err != nil {
		return Appointment{}, err
	}
	ms := []MirrorRow{}
	if err := tx.NewSelect().Model(&ms).Where("appointment_id = ?", id).Order("id").Scan(ctx); err != nil {
		return Appointment{}, fmt.Errorf("appointments: mirrors: %w", err)
	}
	return Appointment{Object: "appointment", ID: a.ID, Title: a.Title, Status: a.Status, StartsAt: apitime.At(a.StartsAt),
		EndsAt: apitime.At(a.EndsAt), ServiceOrderID: a.ServiceOrderID, ClientID: a.ClientID, MemberIDs: a.MemberIDs,
		PriceCents: a.PriceCents, Mirrors: ms, CreatedAt: apitime.At(a.CreatedAt), UpdatedAt: apitime.At(a.UpdatedAt)}, nil
}
