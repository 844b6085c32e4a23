package dispatch

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/ids"
	"oficina/streams"
	"oficina/tenant"
)

// The dispatcher's reads before a send and writes after it run in batches
// (batcher): one transaction per batch. Its bulk — the checks of every
// delivery and the records of the successes — is one call each of the
// PL/pgSQL functions oficina_dispatch_views and oficina_dispatch_succeeded
// (migration 0920): one round trip per batch whatever its companies. They
// set app.company_id before each company's rows, so row-level security
// holds as in tenant.Tx; the rarer per-delivery writes here (closing a
// delivery, a failed attempt) set it themselves. Companies are visited in
// id order, so two batches do not wait on each other in a cycle.

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

// prepareBatch checks each delivery before its send: still pending, its
// endpoint exists and is enabled, the company's plan has the API and the
// subscriber still has access. Otherwise it closes the delivery (no attempt
// used) and its plan sends nothing.
func (d *Dispatcher) prepareBatch(ctx context.Context, dms []streams.DeliveryMessage) []batchResult[plan] {
	now := d.cfg.Now()
	out := make([]batchResult[plan], len(dms))
	var companies, dids, eids []string
	for _, dm := range dms {
		companies, dids, eids = append(companies, dm.CompanyID), append(dids, dm.DeliveryID), append(eids, dm.EndpointID)
	}
	err := d.cfg.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var raw []byte
		if err := tx.QueryRowContext(ctx, "SELECT oficina_dispatch_views(?, ?, ?)",
			pgdialect.Array(companies), pgdialect.Array(dids), pgdialect.Array(eids)).Scan(&raw); err != nil {
			return fmt.Errorf("read views: %w", err)
		}
		views := map[string]*companyView{}
		if err := json.Unmarshal(raw, &views); err != nil {
			return fmt.Errorf("decode views: %w", err)
		}
		for _, g := range byCompany(len(dms), func(i int) string { return dms[i].CompanyID }) {
			company := dms[g[0]].CompanyID
			v := views[company]
			if v == nil || v.Company == nil {
				return fmt.Errorf("company %s: %w", company, sql.ErrNoRows)
			}
			if err := d.prepareCompany(ctx, tx, company, v, dms, g, out, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return allFailed[plan](len(dms), fmt.Errorf("dispatch: prepare: %w", err))
	}
	return out
}

// companyView is what oficina_dispatch_views returns of one company: the
// batch's deliveries, their endpoints, the plan, the subscribing keys and
// members (and the keys' creators).
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

// prepareCompany decides for the deliveries idx of one company from its
// view; a delivery it closes is written under the company's setting.
func (d *Dispatcher) prepareCompany(ctx context.Context, tx bun.Tx, company string, v *companyView, dms []streams.DeliveryMessage, idx []int, out []batchResult[plan], now time.Time) error {
	scoped := false
	scope := func() error {
		if scoped {
			return nil
		}
		scoped = true
		return setCompany(ctx, tx, company)
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
			if err := errors.Join(scope(), closeDelivery(ctx, tx, dm.DeliveryID, ErrEndpointDisabled, now)); err != nil {
				return err
			}
			out[i].res.closed = OutcomeEndpointDisabled
			continue
		case !planOK:
			if err := errors.Join(scope(), closeDelivery(ctx, tx, dm.DeliveryID, ErrPlanWithoutAPI, now)); err != nil {
				return err
			}
			out[i].res.closed = OutcomePlanWithoutAPI
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
			if err := scope(); err != nil {
				return err
			}
			if err := d.accessLost(ctx, tx, e, dm, now); err != nil {
				return err
			}
			out[i].res.closed = OutcomeSubscriberAccessLost
			continue
		}
		keys, err := e.signingKeys(d.cfg.Secrets, now)
		if err != nil {
			// A key missing from the ring, or a value that does not open:
			// the attempt fails (and is retried on the schedule, so putting
			// the key back saves the delivery). The error names the key id
			// and the endpoint, never a secret.
			d.cfg.Log.Error("dispatch: cannot open the endpoint's signing secret", "company", company,
				"endpoint", e.ID, "key_id", e.KeyID, "err", err)
		}
		out[i].res = plan{send: true, url: e.URL, keys: keys, failing: e.FailingSince != nil}
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
	err := d.cfg.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var ok, failed []int
		for i := range reqs {
			if reqs[i].r.ok() {
				ok = append(ok, i)
			} else {
				failed = append(failed, i)
			}
		}
		if err := recordSucceeded(ctx, tx, reqs, ok, now); err != nil {
			return err
		}
		for _, i := range ok {
			out[i] = batchResult[outcome]{res: outcome{sent: true, ok: true}}
		}
		// Failures one by one (they lock the endpoint, may schedule, disable
		// and mail), companies and endpoints in id order.
		slices.SortFunc(failed, func(a, b int) int {
			return cmp.Or(cmp.Compare(reqs[a].dm.CompanyID, reqs[b].dm.CompanyID), cmp.Compare(reqs[a].dm.EndpointID, reqs[b].dm.EndpointID))
		})
		for k, i := range failed {
			if k == 0 || reqs[failed[k-1]].dm.CompanyID != reqs[i].dm.CompanyID {
				if err := setCompany(ctx, tx, reqs[i].dm.CompanyID); err != nil {
					return err
				}
			}
			o, err := d.recordFailed(ctx, tx, reqs[i], now)
			if err != nil {
				return err
			}
			out[i] = batchResult[outcome]{res: o}
		}
		return recordDetails(ctx, tx, reqs)
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

// recordSucceeded writes the 2xx attempts reqs[idx] of every company in one
// call of oficina_dispatch_succeeded.
func recordSucceeded(ctx context.Context, tx bun.Tx, reqs []attemptReq, idx []int, now time.Time) error {
	if len(idx) == 0 {
		return nil
	}
	var companies, aids, dids, eids []string
	var started []time.Time
	var codes []int
	for _, i := range idx {
		if reqs[i].dm.CompanyID == "" {
			return tenant.ErrNoCompany
		}
		companies = append(companies, reqs[i].dm.CompanyID)
		aids = append(aids, ids.New("wha"))
		dids = append(dids, reqs[i].dm.DeliveryID)
		eids = append(eids, reqs[i].dm.EndpointID)
		started = append(started, reqs[i].started)
		codes = append(codes, reqs[i].r.status)
	}
	if _, err := tx.ExecContext(ctx, "SELECT oficina_dispatch_succeeded(?, ?, ?, ?, ?, ?, ?)",
		pgdialect.Array(companies), pgdialect.Array(aids), pgdialect.Array(dids), pgdialect.Array(eids),
		pgdialect.Array(started), pgdialect.Array(codes), now); err != nil {
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
	// The row's endpoint, not the message's: the attempt's foreign key
	// is (company, endpoint, delivery) of the delivery it belongs to.
	a := &streams.Attempt{ID: ids.New("wha"), CompanyID: dl.CompanyID, DeliveryID: dl.ID, EndpointID: dl.EndpointID,
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
