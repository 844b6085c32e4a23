package dispatch

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/ids"
	"oficina/streams"
	"oficina/tenant"
)

// The dispatcher's reads before a send and writes after it run in batches
// (batcher): one transaction per batch, the rows of each company read and
// written under that company's app.company_id, so row-level security holds
// as in tenant.Tx. Companies are visited in id order and endpoints locked in
// id order, so two batches never wait on each other in a cycle.

// setCompanySQL sets the company of row-level security for the rest of
// the transaction (true: local to it).
const setCompanySQL = "SELECT set_config('app.company_id', ?, true)"

// setCompany scopes what follows in tx to companyID (RLS), like tenant.Tx
// does for a whole transaction.
func setCompany(ctx context.Context, tx bun.Tx, companyID string) error {
	if companyID == "" {
		return tenant.ErrNoCompany
	}
	if _, err := tx.ExecContext(ctx, setCompanySQL, companyID); err != nil {
		return fmt.Errorf("dispatch: set company: %w", err)
	}
	return nil
}

// byCompany groups the indexes 0..n-1 by company id, companies in id order.
func byCompany(n int, company func(i int) string) [][]int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(company(a), company(b)) })
	var groups [][]int
	for i, x := range idx {
		if i == 0 || company(x) != company(idx[i-1]) {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], x)
	}
	return groups
}

// inTx runs fn once per company group of n requests in one transaction;
// fn scopes the transaction to its company before touching rows.
func (d *Dispatcher) inTx(ctx context.Context, n int, company func(i int) string, fn func(ctx context.Context, tx bun.Tx, company string, idx []int) error) error {
	return d.cfg.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, g := range byCompany(n, company) {
			if err := fn(ctx, tx, company(g[0]), g); err != nil {
				return err
			}
		}
		return nil
	})
}

// prepareBatch checks each delivery before its send: still pending, its
// endpoint exists and is enabled, the company's plan has the API and the
// subscriber still has access. Otherwise it closes the delivery (no attempt
// used) and its plan sends nothing.
func (d *Dispatcher) prepareBatch(ctx context.Context, dms []streams.DeliveryMessage) []batchResult[plan] {
	now := d.cfg.Now()
	out := make([]batchResult[plan], len(dms))
	err := d.inTx(ctx, len(dms), func(i int) string { return dms[i].CompanyID }, func(ctx context.Context, tx bun.Tx, company string, idx []int) error {
		if err := setCompany(ctx, tx, company); err != nil {
			return err
		}
		return d.prepareCompany(ctx, tx, company, dms, idx, out, now)
	})
	if err != nil {
		return allFailed[plan](len(dms), fmt.Errorf("dispatch: prepare: %w", err))
	}
	return out
}

// companyState is what prepare reads of one company for a batch, in one
// statement (one round trip) as JSON: the deliveries, their endpoints, the
// plan, the subscribing keys and members (and the keys' creators).
type companyView struct {
	Deliveries []struct {
		ID        string `json:"id"`
		Status    string `json:"status"`
		EventType string `json:"event_type"`
	} `json:"deliveries"`
	Endpoints []endpoint      `json:"endpoints"`
	Company   *tenant.Company `json:"company"`
	Keys      []tenant.APIKey `json:"keys"`
	Members   []tenant.Member `json:"members"`
}

const companyViewSQL = `WITH e AS (SELECT * FROM webhook_endpoints WHERE id IN (?1)),
k AS (SELECT * FROM api_keys WHERE id IN (SELECT subscriber_key_id FROM e))
SELECT json_build_object(
  'deliveries', (SELECT coalesce(json_agg(json_build_object('id', d.id, 'status', d.status, 'event_type', d.event_type)), '[]')
                 FROM webhook_deliveries d WHERE d.id IN (?0)),
  'endpoints', (SELECT coalesce(json_agg(e), '[]') FROM e),
  'company', (SELECT json_build_object('id', c.id, 'plan', c.plan, 'api_enabled', c.api_enabled) FROM companies c WHERE c.id = ?2),
  'keys', (SELECT coalesce(json_agg(k), '[]') FROM k),
  'members', (SELECT coalesce(json_agg(m), '[]') FROM members m
              WHERE m.id IN (SELECT subscriber_member_id FROM e) OR m.id IN (SELECT created_by FROM k)))`

func (d *Dispatcher) prepareCompany(ctx context.Context, tx bun.Tx, company string, dms []streams.DeliveryMessage, idx []int, out []batchResult[plan], now time.Time) error {
	for _, i := range idx {
		out[i] = batchResult[plan]{}
	}
	dids := make([]string, 0, len(idx))
	eids := make([]string, 0, len(idx))
	for _, i := range idx {
		dids = append(dids, dms[i].DeliveryID)
		eids = append(eids, dms[i].EndpointID)
	}
	var raw []byte
	if err := tx.QueryRowContext(ctx, companyViewSQL, bun.In(dids), bun.In(slices.Compact(slices.Sorted(slices.Values(eids)))), company).Scan(&raw); err != nil {
		return fmt.Errorf("read company view: %w", err)
	}
	var v companyView
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("decode company view: %w", err)
	}
	if v.Company == nil {
		return fmt.Errorf("company %s: %w", company, sql.ErrNoRows)
	}
	planOK := v.Company.Plan.Limits().API && v.Company.APIEnabled
	status := map[string]string{}
	for _, dl := range v.Deliveries {
		status[dl.ID] = dl.Status
	}
	endpoints := map[string]*endpoint{}
	for k := range v.Endpoints {
		endpoints[v.Endpoints[k].ID] = &v.Endpoints[k]
	}
	keys := map[string]*tenant.APIKey{}
	for k := range v.Keys {
		keys[v.Keys[k].ID] = &v.Keys[k]
	}
	members := map[string]*tenant.Member{}
	for k := range v.Members {
		members[v.Members[k].ID] = &v.Members[k]
	}
	for _, i := range idx {
		dm := dms[i]
		st, found := status[dm.DeliveryID]
		e := endpoints[dm.EndpointID]
		switch {
		case !found || e == nil: // endpoint deleted with its log: drop
			continue
		case st != streams.StatusPending: // a stale or duplicate message: already final
			continue
		case e.Status != "enabled":
			if err := closeDelivery(ctx, tx, dm.DeliveryID, ErrEndpointDisabled, now); err != nil {
				return err
			}
			continue
		case !planOK:
			if err := closeDelivery(ctx, tx, dm.DeliveryID, ErrPlanWithoutAPI, now); err != nil {
				return err
			}
			continue
		}
		var k *tenant.APIKey
		var creator *tenant.Member
		if e.SubscriberKeyID != nil {
			if k = keys[*e.SubscriberKeyID]; k != nil {
				creator = members[k.CreatedBy]
			}
		}
		if !subscriberAllowed(e, members[e.SubscriberMemberID], k, creator, dm.EventType, now) {
			if err := d.accessLost(ctx, tx, e, dm, now); err != nil {
				return err
			}
			continue
		}
		out[i].res = plan{send: true, url: e.URL, secrets: e.secrets(now), failing: e.FailingSince != nil}
	}
	return nil
}

// attemptReq is one finished attempt to record.
type attemptReq struct {
	dm      streams.DeliveryMessage
	started time.Time
	r       attemptResult
}

// recordBatch writes each attempt and its delivery's new state, and the
// endpoint's health (auto-disable after DisableAfter of failures only).
// Successes, the bulk at load, take three statements per company whatever
// their number. When a batch fails as a whole its requests are tried one by
// one, so one bad row cannot fail its neighbours.
func (d *Dispatcher) recordBatch(ctx context.Context, reqs []attemptReq) []batchResult[outcome] {
	now := d.cfg.Now()
	out := make([]batchResult[outcome], len(reqs))
	err := d.inTx(ctx, len(reqs), func(i int) string { return reqs[i].dm.CompanyID }, func(ctx context.Context, tx bun.Tx, company string, idx []int) error {
		return d.recordCompany(ctx, tx, company, reqs, idx, out, now)
	})
	if err == nil {
		return out
	}
	if len(reqs) == 1 || ctx.Err() != nil {
		return allFailed[outcome](len(reqs), fmt.Errorf("dispatch: record %s: %w", reqs[0].dm.DeliveryID, err))
	}
	for i := range reqs {
		out[i] = d.recordBatch(ctx, reqs[i:i+1])[0]
	}
	return out
}

func (d *Dispatcher) recordCompany(ctx context.Context, tx bun.Tx, company string, reqs []attemptReq, idx []int, out []batchResult[outcome], now time.Time) error {
	var ok, failed []int
	for _, i := range idx {
		if reqs[i].r.ok() {
			ok = append(ok, i)
		} else {
			failed = append(failed, i)
		}
	}
	if len(ok) > 0 {
		if err := d.recordSucceeded(ctx, tx, company, reqs, ok, now); err != nil {
			return err
		}
	} else if err := setCompany(ctx, tx, company); err != nil {
		return err
	}
	for _, i := range ok {
		out[i] = batchResult[outcome]{res: outcome{sent: true, ok: true}}
	}
	slices.SortFunc(failed, func(a, b int) int { return cmp.Compare(reqs[a].dm.EndpointID, reqs[b].dm.EndpointID) })
	for _, i := range failed {
		o, err := d.recordFailed(ctx, tx, reqs[i], now)
		if err != nil {
			return err
		}
		out[i] = batchResult[outcome]{res: o}
	}
	return nil
}

// recordSucceeded scopes tx to company and writes its 2xx attempts
// set-wise: the attempts (only for deliveries that still exist), the
// deliveries (pending → succeeded; a resent final delivery keeps its
// status), and clears the endpoints' failing and access-lost marks. The
// four statements travel as one simple-protocol message: one round trip,
// run in order inside the transaction, so the company set by the first
// scopes the others.
func (d *Dispatcher) recordSucceeded(ctx context.Context, tx bun.Tx, company string, reqs []attemptReq, idx []int, now time.Time) error {
	var aids, dids, eids []string
	var started []time.Time
	var codes []int
	for _, i := range idx {
		aids = append(aids, ids.New("wha"))
		dids = append(dids, reqs[i].dm.DeliveryID)
		eids = append(eids, reqs[i].dm.EndpointID)
		started = append(started, reqs[i].started)
		codes = append(codes, reqs[i].r.status)
	}
	if company == "" {
		return tenant.ErrNoCompany
	}
	q := d.cfg.DB.QueryGen()
	stmts := []string{
		q.FormatQuery(setCompanySQL, company),
		q.FormatQuery(`INSERT INTO webhook_attempts
		(id, company_id, delivery_id, endpoint_id, started_at, finished_at, response_status_code, created_at)
		SELECT v.aid, d.company_id, d.id, d.endpoint_id, v.started, ?0, v.code, ?0
		FROM unnest(?1::text[], ?2::text[], ?3::timestamptz[], ?4::int[]) AS v(aid, id, started, code)
		JOIN webhook_deliveries d ON d.id = v.id`,
			now, pgdialect.Array(aids), pgdialect.Array(dids), pgdialect.Array(started), pgdialect.Array(codes)),
		q.FormatQuery(`UPDATE webhook_deliveries AS d SET
		status = CASE WHEN d.status = ?1 THEN ?2 ELSE d.status END,
		completed_at = CASE WHEN d.status = ?1 THEN ?0 ELSE d.completed_at END,
		next_attempt_at = CASE WHEN d.status = ?1 THEN NULL ELSE d.next_attempt_at END,
		attempt_count = d.attempt_count + 1, last_attempt_at = v.started,
		response_status_code = v.code, error = NULL, updated_at = ?0
		FROM unnest(?3::text[], ?4::timestamptz[], ?5::int[]) AS v(id, started, code)
		WHERE d.id = v.id`,
			now, streams.StatusPending, streams.StatusSucceeded,
			pgdialect.Array(dids), pgdialect.Array(started), pgdialect.Array(codes)),
		q.FormatQuery(`UPDATE webhook_endpoints SET failing_since = NULL, access_lost_notified_at = NULL
		WHERE id IN (?) AND (failing_since IS NOT NULL OR access_lost_notified_at IS NOT NULL)`,
			bun.In(slices.Compact(slices.Sorted(slices.Values(eids))))),
	}
	// tx.Tx: the statements are formatted already; bun must not parse them again.
	if _, err := tx.Tx.ExecContext(ctx, strings.Join(stmts, ";\n")); err != nil {
		return fmt.Errorf("record successes: %w", err)
	}
	return nil
}

// recordFailed writes a non-2xx (or unanswered) attempt: the delivery is
// retried on the schedule, or failed when attempts are exhausted or the
// endpoint was disabled.
func (d *Dispatcher) recordFailed(ctx context.Context, tx bun.Tx, q attemptReq, now time.Time) (outcome, error) {
	out := outcome{sent: true}
	dl := new(streams.Delivery)
	if err := tx.NewSelect().Model(dl).Where("id = ?", q.dm.DeliveryID).For("UPDATE").Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return out, nil
		}
		return out, err
	}
	a := &streams.Attempt{ID: ids.New("wha"), CompanyID: q.dm.CompanyID, DeliveryID: dl.ID, EndpointID: q.dm.EndpointID,
		StartedAt: q.started, FinishedAt: &now, CreatedAt: now}
	if q.r.status != 0 {
		a.ResponseStatusCode = &q.r.status
	}
	if q.r.err != "" {
		a.Error = &q.r.err
	}
	if _, err := tx.NewInsert().Model(a).Exec(ctx); err != nil {
		return out, err
	}
	dl.AttemptCount++
	dl.LastAttemptAt, dl.UpdatedAt = &q.started, now
	dl.ResponseStatusCode, dl.Error = a.ResponseStatusCode, a.Error
	err := d.failed(ctx, tx, dl, q.r, now, &out)
	return out, err
}
