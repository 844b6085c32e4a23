package streams

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/service"
	"oficina/tenant"
)

// Relay defaults.
const (
	// DefaultRelayMinAge leaves rows younger than this to the API's own
	// publish right after commit, so the two rarely race (when they do,
	// JetStream drops the duplicate).
	DefaultRelayMinAge   = 10 * time.Second
	DefaultRelayInterval = 2 * time.Second
	DefaultRelayBatch    = 500
)

// Relay publishes the backlog (decision 0029): the events and deliveries
// whose publish after commit failed, that a write with no publisher left
// there, or that a lost publisher may have left unpublished — first it
// hands over the publishers whose beats stopped (oficina_publishers_lost).
// It is cross-company: it asks the database only which companies have a
// backlog, then handles each company in that company's transaction,
// locking its entries with FOR UPDATE SKIP LOCKED so several relays can run
// at once.
type Relay struct {
	// Base: the logger, and the wall clock that ages the entries.
	service.Base
	DB       *bun.DB
	JS       jetstream.JetStream
	MinAge   time.Duration // 0: DefaultRelayMinAge; negative: none
	Interval time.Duration // 0: DefaultRelayInterval
	Batch    int           // entries per company and round; 0: DefaultRelayBatch
	// LostAfter is how long a publisher's beats may stop before it is
	// taken for lost; 0: DefaultLostAfter.
	LostAfter time.Duration
	// Only, when set, is the list of companies to relay instead of asking
	// the database (a relay per group of tenants; tests sharing a
	// database). Such a relay leaves lost publishers to a relay of all.
	Only []string
	// Ran, when set, is told the outcome of each round of Run: the
	// messages it published and its error (metrics).
	Ran func(published int, err error)
}

func (r *Relay) batch() int {
	if r.Batch > 0 {
		return r.Batch
	}
	return DefaultRelayBatch
}

// Run relays every Interval until ctx ends.
func (r *Relay) Run(ctx context.Context) error {
	every := r.Interval
	if every <= 0 {
		every = DefaultRelayInterval
	}
	return r.Every(ctx, every, "events relay", func(ctx context.Context) (int, error) {
		n, err := r.RunOnce(ctx)
		if r.Ran != nil && ctx.Err() == nil {
			r.Ran(n, err)
		}
		return n, err
	})
}

// lostMargin widens a lost publisher's window for the clocks of the
// processes that stamp the rows.
const lostMargin = 5 * time.Second

// HandOverLost puts in the backlog what each publisher silent since
// before `before` may have left unpublished, and forgets it; it returns
// how many it handed over.
func HandOverLost(ctx context.Context, db bun.IDB, before time.Time) (int, error) {
	var n int
	if err := db.NewRaw("SELECT oficina_publishers_lost(?, ?::interval)", before, lostMargin.String()).Scan(ctx, &n); err != nil {
		return 0, fmt.Errorf("streams: lost publishers: %w", err)
	}
	return n, nil
}

// RunOnce hands lost publishers over, publishes the backlog recorded
// before now - MinAge and returns how many messages it published.
func (r *Relay) RunOnce(ctx context.Context) (int, error) {
	now := r.WallNow()
	if len(r.Only) == 0 {
		lostAfter := cmp.Or(r.LostAfter, DefaultLostAfter)
		n, err := HandOverLost(ctx, r.DB, now.Add(-lostAfter))
		if err != nil {
			return 0, err
		}
		if n > 0 {
			r.Logger().WarnContext(ctx, "events relay: publishers stopped beating; their windows are republished", "publishers", n)
		}
	}
	minAge := r.MinAge
	if minAge == 0 {
		minAge = DefaultRelayMinAge
	}
	cutoff := now
	if minAge > 0 {
		cutoff = cutoff.Add(-minAge)
	}
	companies := r.Only
	if len(companies) == 0 {
		var err error
		if companies, err = BacklogCompanies(ctx, r.DB, cutoff, 1000); err != nil {
			return 0, err
		}
	}
	total := 0
	var errs []error
	for _, co := range companies {
		n, err := r.company(ctx, co, cutoff)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("company %s: %w", co, err))
		}
	}
	return total, errors.Join(errs...)
}

// pendingDelivery is a delivery of the backlog with its event's body.
type pendingDelivery struct {
	ID         string  `bun:"id"`
	EndpointID string  `bun:"endpoint_id"`
	EventID    string  `bun:"event_id"`
	EventType  string  `bun:"event_type"`
	Kind       string  `bun:"kind"`
	Body       []byte  `bun:"body"`
	OrderKey   *string `bun:"order_key"`
	OrderSeq   *int64  `bun:"order_seq"`
}

// company publishes one company's backlog, holding its entries' locks
// until they are deleted, so another relay skips them. An entry whose row
// is gone (its day dropped) is deleted with nothing to publish.
func (r *Relay) company(ctx context.Context, companyID string, cutoff time.Time) (int, error) {
	var published int
	err := tenant.Tx(ctx, r.DB, companyID, func(ctx context.Context, tx bun.Tx) error {
		var es []BacklogEntry
		err := tx.NewSelect().Model(&es).Where("created_at < ?", cutoff).
			Order("created_at").Limit(int64(r.batch())).For("UPDATE SKIP LOCKED").Scan(ctx)
		if err != nil {
			return fmt.Errorf("backlog: %w", err)
		}
		if len(es) == 0 {
			return nil
		}
		msgs, err := r.load(ctx, tx, companyID, es)
		if err != nil {
			return err
		}
		acked, pubErr := publishAll(ctx, r.JS, msgs)
		published = len(acked)
		done := map[string]bool{}
		for _, m := range acked {
			done[m.entry.ID] = true
		}
		// Deleted: what JetStream acknowledged, and what has no row left.
		found := map[string]bool{}
		for _, m := range msgs {
			found[m.entry.ID] = true
		}
		var gone []string
		for _, e := range es {
			if done[e.ID] || !found[e.ID] {
				gone = append(gone, e.ID)
			}
		}
		if len(gone) > 0 {
			if _, err := removeFromBacklog(tx, companyID, gone).Exec(ctx); err != nil {
				return fmt.Errorf("backlog: %w", err)
			}
		}
		if pubErr != nil {
			r.Logger().WarnContext(ctx, "events relay: some publishes failed", "company", companyID, "error", pubErr)
		}
		return nil
	})
	return published, err
}

// load reads the rows es stand for and builds their messages.
func (r *Relay) load(ctx context.Context, tx bun.Tx, companyID string, es []BacklogEntry) ([]outMsg, error) {
	var evIDs, dlIDs []string
	at := map[string]time.Time{}
	first, last := es[0].CreatedAt, es[0].CreatedAt
	for _, e := range es {
		at[e.ID] = e.CreatedAt
		first, last = minTime(first, e.CreatedAt), maxTime(last, e.CreatedAt)
		if e.Kind == BacklogEvent {
			evIDs = append(evIDs, e.ID)
		} else {
			dlIDs = append(dlIDs, e.ID)
		}
	}
	var msgs []outMsg
	if len(evIDs) > 0 {
		var events []OutboxEvent
		// The creation times bound the lookup to their day partitions.
		err := tx.NewSelect().Model(&events).Column("id", "company_id", "type", "body").
			Where("id = ANY (?)", pgdialect.Array(evIDs)).Where("created_at BETWEEN ? AND ?", first, last).Scan(ctx)
		if err != nil {
			return nil, fmt.Errorf("backlog events: %w", err)
		}
		for _, e := range events {
			m, err := eventMsg(companyID, e.ID, e.Type, e.Body)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, outMsg{msg: m, entry: BacklogEntry{CompanyID: companyID, ID: e.ID, Kind: BacklogEvent, CreatedAt: at[e.ID]}})
		}
	}
	if len(dlIDs) > 0 {
		var ds []pendingDelivery
		err := tx.NewSelect().TableExpr("webhook_deliveries AS d").
			Join("JOIN event_outbox AS e ON e.id = d.event_id AND e.created_at <= d.created_at").
			ColumnExpr("d.id, d.endpoint_id, d.event_id, d.event_type, d.kind, e.body, d.order_key, d.order_seq").
			Where("d.id = ANY (?)", pgdialect.Array(dlIDs)).Scan(ctx, &ds)
		if err != nil {
			return nil, fmt.Errorf("backlog deliveries: %w", err)
		}
		for _, d := range ds {
			dm := DeliveryMessage{DeliveryID: d.ID, EndpointID: d.EndpointID, CompanyID: companyID,
				EventID: d.EventID, EventType: d.EventType, Kind: d.Kind, Body: d.Body}
			if d.OrderKey != nil && d.OrderSeq != nil {
				dm.OrderKey, dm.OrderSeq = *d.OrderKey, *d.OrderSeq
			}
			m, err := dm.Msg()
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, outMsg{msg: m, entry: BacklogEntry{CompanyID: companyID, ID: d.ID, Kind: BacklogDelivery, CreatedAt: at[d.ID]}})
		}
	}
	return msgs, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// BacklogCompanies asks the database which companies hold backlog entries
// recorded before `before` (a narrow definer function: it answers company
// ids only).
func BacklogCompanies(ctx context.Context, db bun.IDB, before time.Time, limit int) ([]string, error) {
	var out []string
	if err := db.NewRaw("SELECT oficina_backlog_companies(?, ?)", before, limit).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("streams: backlog companies: %w", err)
	}
	return out, nil
}
