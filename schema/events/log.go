package events

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/eventnames"
	"oficina/schema/page"
	"oficina/streams"
	"oficina/streams/envelope"
	"oficina/tenant"
)

// The log's read side: GET /events and GET /events/{id} (decision 0035).
// Every event a write records stays in event_outbox until its day is
// dropped (30 days by default, decision 0029), whether or not an endpoint
// subscribed, so an integrator can catch up on what its webhooks missed.

// Event is an event as its webhooks deliver it: the envelope of spec 6.2,
// byte for byte. Its members describe the document; the answer is the
// stored body.
type Event struct {
	ID             string       `json:"id" doc:"The event id (evt_ + 32 hex characters): the webhook-id of its deliveries."`
	Type           string       `json:"type" doc:"The event name, e.g. sale.paid (docs/events.md)."`
	APIVersion     string       `json:"api_version" const:"v1"`
	Timestamp      apitime.Time `json:"timestamp" doc:"When the write happened; what receivers order by."`
	OrganizationID string       `json:"organization_id" doc:"The company (co_…)."`
	Data           EventData    `json:"data"`
	raw            []byte
	at             time.Time
}

// At is when the event happened (its timestamp).
func (e Event) At() time.Time { return e.at }

// Body is the envelope as stored and delivered.
func (e Event) Body() []byte { return e.raw }

// ObjectID is the id of the record the event is about ("" for none).
func (e Event) ObjectID() string {
	var b struct {
		Data struct {
			Object struct {
				ID string `json:"id"`
			} `json:"object"`
		} `json:"data"`
	}
	_ = json.Unmarshal(e.raw, &b)
	return b.Data.Object.ID
}

// EventData is an event's data member.
type EventData struct {
	Object          json.RawMessage `json:"object" doc:"The resource as its GET returned it at the write, or only object and id when object_truncated."`
	ChangedFields   []string        `json:"changed_fields,omitempty" doc:"On .updated events: the fields the write changed, alphabetically."`
	ObjectTruncated bool            `json:"object_truncated,omitempty" doc:"Present, and true, when data.object has only object and id."`
}

// MarshalJSON is the envelope exactly as stored and delivered.
func (e Event) MarshalJSON() ([]byte, error) {
	if e.raw == nil {
		return nil, errors.New("events: an event without its stored body")
	}
	return e.raw, nil
}

// Filter is what GET /events selects on.
type Filter struct {
	// Types are the names asked for, families expanded; nil: every type.
	Types []string
	// After and Before bound the events' timestamps: at or after, before.
	After, Before *time.Time
	// ObjectID keeps the events of one record (data.object.id).
	ObjectID string
	// Delivered, when set, keeps the events every endpoint they were sent
	// to received (true) or those some endpoint has not (false: pending or
	// failed, a successful resend counting as received).
	Delivered *bool
}

// filterParams are the query members GET /events takes besides the page.
var filterParams = []string{"type", "created_after", "created_before", "object_id", "delivery_success", "limit", "starting_after"}

// ObjectIDPattern and IDPattern are the object_id filter and an
// event id, as the OpenAPI document states them.
const (
	ObjectIDPattern = `^[a-z]{2,4}_[0-9a-z]{1,60}$`
	IDPattern       = envelope.EventIDPattern
)

var (
	objectIDPattern = regexp.MustCompile(ObjectIDPattern)
	eventIDPattern  = regexp.MustCompile(IDPattern)
)

// TypeFilterPattern is a value of the type filter ParseFilter takes: a
// name of the catalogue or a family wildcard such as sale.* (not *, not
// ping), as the OpenAPI document states it (issue 26 item 6). A pattern
// rather than an enum: generated clients keep the filter a list of
// strings.
func TypeFilterPattern() string {
	var alts []string
	for _, f := range eventnames.Families() {
		alts = append(alts, regexp.QuoteMeta(f.Name+".*"))
	}
	for _, n := range Names() {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	slices.Sort(alts)
	return "^(?:" + strings.Join(alts, "|") + ")$"
}

// MaxTypes bounds the type filters of one request.
const MaxTypes = 20

// ParseFilter reads GET /events' filters: type (repeatable: a name of the
// catalogue or a family wildcard such as sale.*), created_after,
// created_before (timestamps of part 2.1), object_id and delivery_success
// (true or false). Anything else, or a malformed value, is 400
// invalid_request.
func ParseFilter(q url.Values) (Filter, error) {
	var f Filter
	bad := apierr.New(apierr.InvalidRequest)
	for k, vs := range q {
		if !slices.Contains(filterParams, k) || k != "type" && len(vs) != 1 {
			return f, bad
		}
	}
	if vs, ok := q["type"]; ok {
		if len(vs) > MaxTypes {
			return f, bad
		}
		f.Types = []string{}
		for _, v := range vs {
			names, ok := expand(v)
			if !ok {
				return f, bad
			}
			f.Types = append(f.Types, names...)
		}
		slices.Sort(f.Types)
		f.Types = slices.Compact(f.Types)
	}
	for name, dst := range map[string]**time.Time{"created_after": &f.After, "created_before": &f.Before} {
		if !q.Has(name) {
			continue
		}
		t, err := apitime.ParseTimestamp(q.Get(name))
		if err != nil {
			return f, bad
		}
		*dst = &t.Time
	}
	if q.Has("object_id") {
		if f.ObjectID = q.Get("object_id"); !objectIDPattern.MatchString(f.ObjectID) {
			return f, bad
		}
	}
	if q.Has("delivery_success") {
		switch q.Get("delivery_success") {
		case "true":
			f.Delivered = new(true)
		case "false":
			f.Delivered = new(false)
		default:
			return f, bad
		}
	}
	return f, nil
}

// expand is the catalogued names a type filter means: itself, or every
// name of a family wildcard.
func expand(v string) ([]string, bool) {
	if _, ok := Lookup(v); ok {
		return []string{v}, true
	}
	fam, ok := eventnames.WildcardFamily(v)
	if !ok {
		return nil, false
	}
	var out []string
	for _, n := range Names() {
		if streams.Family(n) == fam {
			out = append(out, n)
		}
	}
	return out, true
}

// Reader says which modules' events a caller may read (the rule of a
// subscription, part 5.2: <module>:read).
type Reader func(module string) bool

// PrincipalReads is the rule for an API key's principal: the key holds
// <module>:read and its member's access reaches the module.
func PrincipalReads(p *tenant.Principal) Reader {
	return func(module string) bool {
		return p.HasKeyPermission(tenant.Perm(module, tenant.Read)) && p.MemberAllows(module, tenant.Read)
	}
}

// Visible are the catalogued names whose module read may read.
func Visible(read Reader) []string {
	var out []string
	for _, n := range Names() {
		if read(ModuleOf(n)) {
			out = append(out, n)
		}
	}
	return out
}

// logRow is a row of event_outbox as the log reads it.
type logRow struct {
	bun.BaseModel `bun:"table:event_outbox,alias:e"`
	ID            string    `bun:"id"`
	Type          string    `bun:"type"`
	Body          []byte    `bun:"body"`
	OccurredAt    time.Time `bun:"occurred_at"`
}

func (r logRow) event() Event { return Event{ID: r.ID, Type: r.Type, raw: r.Body, at: r.OccurredAt} }

// List lists the company's events of the visible types, newest first
// (timestamp, then id, so a page never splits the events of one write
// differently twice), filtered. tx is the company's transaction.
func List(ctx context.Context, tx bun.IDB, companyID string, visible []string, pg page.Params, f Filter) (page.List[Event], error) {
	types := visible
	if f.Types != nil {
		types = slices.DeleteFunc(slices.Clone(f.Types), func(n string) bool { return !slices.Contains(visible, n) })
	}
	if len(types) == 0 {
		return page.Wrap(pg, []Event{}), nil
	}
	var rows []logRow
	q := tx.NewSelect().Model(&rows).Column("id", "type", "body", "occurred_at").
		Where("company_id = ?", companyID).Where("type IN (?)", bun.List(types)).
		OrderExpr("e.occurred_at DESC, e.id DESC").Limit(int64(pg.Limit + 1))
	if pg.StartingAfter != "" {
		if !eventIDPattern.MatchString(pg.StartingAfter) {
			return page.List[Event]{}, apierr.New(apierr.InvalidRequest)
		}
		var at logRow
		err := tx.NewSelect().Model(&at).Column("id", "occurred_at").Where("id = ?", pg.StartingAfter).
			Where("company_id = ?", companyID).Where("type IN (?)", bun.List(types)).Limit(1).Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return page.List[Event]{}, apierr.New(apierr.InvalidRequest)
		}
		if err != nil {
			return page.List[Event]{}, fmt.Errorf("events: cursor: %w", err)
		}
		q = q.Where("(e.occurred_at, e.id) < (?, ?)", at.OccurredAt, at.ID)
	}
	if f.After != nil {
		q = q.Where("occurred_at >= ?", *f.After)
	}
	if f.Before != nil {
		q = q.Where("occurred_at < ?", *f.Before)
	}
	if f.ObjectID != "" {
		q = q.Where("convert_from(body, 'UTF8')::jsonb #>> '{data,object,id}' = ?", f.ObjectID)
	}
	if f.Delivered != nil {
		// An endpoint has received the event when one of its deliveries
		// of it (the first, or a resend) succeeded.
		undelivered := `EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.company_id = e.company_id
			AND d.event_id = e.id GROUP BY d.endpoint_id HAVING NOT bool_or(d.status = 'succeeded'))`
		if *f.Delivered {
			q = q.Where("has_deliveries").Where("NOT " + undelivered)
		} else {
			q = q.Where(undelivered)
		}
	}
	if err := q.Scan(ctx); err != nil {
		return page.List[Event]{}, fmt.Errorf("events: list: %w", err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = r.event()
	}
	return page.Wrap(pg, out), nil
}

// Get is one event of the company, if its type is visible (else, as when
// it does not exist, 404 resource_not_found).
func Get(ctx context.Context, tx bun.IDB, companyID string, visible []string, id string) (Event, error) {
	if !eventIDPattern.MatchString(id) {
		return Event{}, apierr.New(apierr.ResourceNotFound)
	}
	var r logRow
	err := tx.NewSelect().Model(&r).Column("id", "type", "body", "occurred_at").Where("id = ?", id).
		Where("company_id = ?", companyID).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !slices.Contains(visible, r.Type) {
		return Event{}, apierr.New(apierr.ResourceNotFound)
	}
	if err != nil {
		return Event{}, fmt.Errorf("events: get: %w", err)
	}
	return r.event(), nil
}
