package appointments

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
)

// Providers of external calendars.
var Providers = []string{"google", "outlook", "caldav"}

// Connection is an external calendar a member connected (dashboard action).
type Connection struct {
	bun.BaseModel `bun:"table:calendar_connections"`

	ID                 string    `bun:"id,pk"`
	CompanyID          string    `bun:"company_id"`
	MemberID           string    `bun:"member_id"`
	Provider           string    `bun:"provider"`
	ExternalCalendarID string    `bun:"external_calendar_id"`
	Active             bool      `bun:"active"`
	CreatedAt          time.Time `bun:"created_at"`
	UpdatedAt          time.Time `bun:"updated_at"`
}

// ConnectionView is a connection as the admin API shows it.
type ConnectionView struct {
	Object             string       `json:"object" const:"connected_calendar"`
	ID                 string       `json:"id"`
	MemberID           string       `json:"member_id"`
	Provider           string       `json:"provider"`
	ExternalCalendarID string       `json:"external_calendar_id"`
	Active             bool         `json:"active"`
	CreatedAt          apitime.Time `json:"created_at"`
	UpdatedAt          apitime.Time `json:"updated_at"`
}

// View renders the connection.
func (c *Connection) View() ConnectionView {
	return ConnectionView{Object: "connected_calendar", ID: c.ID, MemberID: c.MemberID, Provider: c.Provider,
		ExternalCalendarID: c.ExternalCalendarID, Active: c.Active,
		CreatedAt: apitime.At(c.CreatedAt), UpdatedAt: apitime.At(c.UpdatedAt)}
}

// ConnectionInput connects a calendar. The OAuth exchange happens in the
// dashboard; Oficina keeps which calendar of which member to write to.
type ConnectionInput struct {
	MemberID           string `json:"member_id"`
	Provider           string `json:"provider"`
	ExternalCalendarID string `json:"external_calendar_id"`
}

// Connect stores a connection for a member of the company (404 otherwise).
func Connect(ctx context.Context, tx bun.IDB, companyID string, in ConnectionInput, now time.Time) (*Connection, error) {
	var f apierr.Fields
	if !slices.Contains(Providers, in.Provider) {
		f.Add("provider", apierr.InvalidValue)
	}
	cal := strings.TrimSpace(in.ExternalCalendarID)
	switch {
	case cal == "":
		f.Add("external_calendar_id", apierr.Required)
	case strings.ContainsRune(cal, 0):
		f.Add("external_calendar_id", apierr.InvalidValue)
	case utf8.RuneCountInString(cal) > 500:
		f.Add("external_calendar_id", apierr.TooLong)
	}
	if in.MemberID == "" {
		f.Add("member_id", apierr.Required)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if !ids.Valid("mem", in.MemberID) {
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	n, err := tx.NewSelect().Table("members").Where("id = ?", in.MemberID).Where("status <> 'removed'").Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("appointments: member: %w", err)
	}
	if n == 0 {
		return nil, apierr.New(apierr.ResourceNotFound)
	}
	c := &Connection{ID: ids.New("cal"), CompanyID: companyID, MemberID: in.MemberID, Provider: in.Provider,
		ExternalCalendarID: cal, Active: true, CreatedAt: now, UpdatedAt: now}
	if _, err := tx.NewInsert().Model(c).Exec(ctx); err != nil {
		return nil, fmt.Errorf("appointments: connect: %w", err)
	}
	return c, nil
}

// Disconnect stops mirroring to a connection; existing mirrors stay.
func Disconnect(ctx context.Context, tx bun.IDB, id string, now time.Time) (*Connection, error) {
	c, err := db.ByID[Connection](ctx, tx, "cal", id, true)
	if err != nil {
		return nil, err
	}
	c.Active, c.UpdatedAt = false, now
	if _, err := tx.NewUpdate().Model(c).Column("active", "updated_at").WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("appointments: disconnect: %w", err)
	}
	return c, nil
}

// Connections lists the company's connections, oldest first.
func Connections(ctx context.Context, tx bun.IDB) ([]ConnectionView, error) {
	var cs []Connection
	if err := tx.NewSelect().Model(&cs).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("appointments: list connections: %w", err)
	}
	out := make([]ConnectionView, len(cs))
	for i := range cs {
		out[i] = cs[i].View()
	}
	return out, nil
}
