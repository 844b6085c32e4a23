package webhooks

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/secretbox"
	"oficina/tenant"
)

// HealthWindow is the span of an endpoint's health figures.
const HealthWindow = 24 * time.Hour

// Health is how an endpoint has fared over HealthWindow.
type Health struct {
	Attempts int // attempts started in the window
	Failed   int // of which not answered 2xx
	// FailingSince is the first failure of the current run of failures
	// (nil after a success); three days of it disable the endpoint.
	FailingSince  *time.Time
	LastAttemptAt *time.Time
}

// FailureRate is Failed/Attempts, 0 without attempts.
func (h Health) FailureRate() float64 {
	if h.Attempts == 0 {
		return 0
	}
	return float64(h.Failed) / float64(h.Attempts)
}

// HealthOf returns the health at now of the endpoints ids (of the
// transaction's company), by endpoint id.
func HealthOf(ctx context.Context, tx bun.IDB, endpointIDs []string, now time.Time) (map[string]Health, error) {
	out := make(map[string]Health, len(endpointIDs))
	if len(endpointIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		EndpointID string     `bun:"endpoint_id"`
		Attempts   int        `bun:"attempts"`
		Failed     int        `bun:"failed"`
		Last       *time.Time `bun:"last"`
	}
	err := tx.NewSelect().TableExpr("webhook_attempts").
		ColumnExpr("endpoint_id, count(*) AS attempts").
		ColumnExpr("count(*) FILTER (WHERE response_status_code IS NULL OR response_status_code NOT BETWEEN 200 AND 299) AS failed").
		ColumnExpr("max(started_at) AS last").
		Where("endpoint_id IN (?)", bun.List(endpointIDs)).Where("started_at >= ?", now.Add(-HealthWindow)).
		Group("endpoint_id").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("webhooks: health: %w", err)
	}
	for _, r := range rows {
		out[r.EndpointID] = Health{Attempts: r.Attempts, Failed: r.Failed, LastAttemptAt: r.Last}
	}
	var failing []struct {
		ID    string     `bun:"id"`
		Since *time.Time `bun:"failing_since"`
	}
	if err := tx.NewSelect().Table("webhook_endpoints").Column("id", "failing_since").
		Where("id IN (?)", bun.List(endpointIDs)).Scan(ctx, &failing); err != nil {
		return nil, fmt.Errorf("webhooks: health: %w", err)
	}
	for _, f := range failing {
		h := out[f.ID]
		h.FailingSince = f.Since
		out[f.ID] = h
	}
	return out, nil
}

// RevealSecret opens the endpoint's current signing secret, for a caller
// allowed to see it (a portal session with view_secret). The secret stays
// sealed at rest; it is opened in memory for this answer only. Only while
// the company may use the API: with the API off (plan, api_enabled) or the
// subscription lapsed, the API refuses every key, rotate_secret included,
// and so is a reveal refused, with the same 403.
func RevealSecret(ctx context.Context, tx bun.IDB, id string, ring *secretbox.Keyring) (string, error) {
	e, err := Get(ctx, tx, id)
	if err != nil {
		return "", err
	}
	co, err := tenant.GetCompany(ctx, tx, e.CompanyID)
	if err != nil {
		return "", err
	}
	if err := co.RequireAPIAccess(); err != nil {
		return "", err
	}
	s, err := e.SealedSecrets.Open(ring, e.CompanyID, e.ID)
	if err != nil {
		return "", err
	}
	return s.Current, nil
}
