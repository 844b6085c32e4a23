package streams

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

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

// Relay republishes events and deliveries that a crash (or a NATS outage)
// left unpublished after their write committed. It is cross-company: it asks
// the database only which companies have such rows, then handles each
// company in that company's transaction, locking its rows with FOR UPDATE
// SKIP LOCKED so several relays can run at once.
type Relay struct {
	// Base: the logger, and the wall clock that ages and stamps the rows.
	service.Base
	DB       *bun.DB
	JS       jetstream.JetStream
	MinAge   time.Duration // 0: DefaultRelayMinAge; negative: none
	Interval time.Duration // 0: DefaultRelayInterval
	Batch    int           // rows per company and round; 0: DefaultRelayBatch
	// Only, when set, is the list of companies to relay instead of asking
	// the database (a relay per group of tenants; tests sharing a database).
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

// RunOnce publishes what was left unpublished before now - MinAge and
// returns how many messages it published.
func (r *Relay) RunOnce(ctx context.Context) (int, error) {
	minAge := r.MinAge
	if minAge == 0 {
		minAge = DefaultRelayMinAge
	}
	cutoff := r.WallNow()
	if minAge > 0 {
		cutoff = cutoff.Add(-minAge)
	}
	companies := r.Only
	if len(companies) == 0 {
		var err error
		if companies, err = UnpublishedCompanies(ctx, r.DB, cutoff, 1000); err != nil {
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

// pendingDelivery is an unpublished delivery with its event's body.
type pendingDelivery struct {
	ID         string `bun:"id"`
	EndpointID string `bun:"endpoint_id"`
	EventID    string `bun:"event_id"`
	EventType  string `bun:"event_type"`
	Kind       string `bun:"kind"`
	Body       []byte `bun:"body"`
}

// company publishes one company's unpublished rows, holding their locks
// until they are marked, so another relay skips them.
func (r *Relay) company(ctx context.Context, companyID string, cutoff time.Time) (int, error) {
	var published int
	err := tenant.Tx(ctx, r.DB, companyID, func(ctx context.Context, tx bun.Tx) error {
		var events []OutboxEvent
		err := tx.NewSelect().Model(&events).Column("id", "company_id", "type", "body").
			Where("published_at IS NULL").Where("created_at < ?", cutoff).
			Order("created_at").Limit(int64(r.batch())).For("UPDATE SKIP LOCKED").Scan(ctx)
		if err != nil {
			return fmt.Errorf("unpublished events: %w", err)
		}
		var ds []pendingDelivery
		err = tx.NewSelect().TableExpr("webhook_deliveries AS d").
			Join("JOIN event_outbox AS e ON e.id = d.event_id").
			ColumnExpr("d.id, d.endpoint_id, d.event_id, d.event_type, d.kind, e.body").
			Where("d.published_at IS NULL").Where("d.created_at < ?", cutoff).
			Order("d.created_at").Limit(int64(r.batch())).For("UPDATE OF d SKIP LOCKED").Scan(ctx, &ds)
		if err != nil {
			return fmt.Errorf("unpublished deliveries: %w", err)
		}
		msgs := make([]outMsg, 0, len(events)+len(ds))
		for _, e := range events {
			m, err := eventMsg(companyID, e.ID, e.Type, e.Body)
			if err != nil {
				return err
			}
			msgs = append(msgs, outMsg{msg: m, company: companyID, eventID: e.ID})
		}
		for _, d := range ds {
			m, err := DeliveryMessage{DeliveryID: d.ID, EndpointID: d.EndpointID, CompanyID: companyID,
				EventID: d.EventID, EventType: d.EventType, Kind: d.Kind, Body: d.Body}.Msg()
			if err != nil {
				return err
			}
			msgs = append(msgs, outMsg{msg: m, company: companyID, deliveryID: d.ID})
		}
		acked, pubErr := publishAll(ctx, r.JS, msgs)
		published = len(acked)
		// Mark what was acknowledged even when some publishes failed; the
		// rest stays for the next round.
		if err := markPublished(ctx, tx, acked, r.WallNow()); err != nil {
			return err
		}
		if pubErr != nil {
			r.Logger().WarnContext(ctx, "events relay: some publishes failed", "company", companyID, "error", pubErr)
		}
		return nil
	})
	return published, err
}

// UnpublishedCompanies asks the database which companies hold events or
// deliveries left unpublished since before `before` (a narrow definer
// function: it answers company ids only).
func UnpublishedCompanies(ctx context.Context, db bun.IDB, before time.Time, limit int) ([]string, error) {
	var out []string
	if err := db.NewRaw("SELECT oficina_unpublished_companies(?, ?)", before, limit).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("streams: unpublished companies: %w", err)
	}
	return out, nil
}
