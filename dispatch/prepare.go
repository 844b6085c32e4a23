package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/events"
	"oficina/schema/mail"
	"oficina/schema/secretbox"
	"oficina/schema/signing"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// The prepare stage: what a delivery needs before its send, read in the
// cycle's transaction (cycle.go), and the deliveries closed without an
// attempt.

// Close reasons written to a delivery's error when it is failed without an
// attempt.
const (
	ErrSubscriberAccessLost = "subscriber_access_lost"
	ErrPlanWithoutAPI       = "plan_without_api"
	ErrEndpointDisabled     = "endpoint_disabled"
)

// MailAccessLost is the mail kind sent when an endpoint's subscriber lost
// access to what it receives.
const MailAccessLost = "webhook_subscriber_access_lost"

// plan is what prepare found: what to send, or nothing. keys are the
// opened secrets' HMAC keys; none when they could not be opened (the
// attempt then fails without a request).
type plan struct {
	send    bool
	url     string
	keys    [][]byte
	failing bool
	closed  string // why the delivery was closed without an attempt, if it was
}

// viewsSQL reads what the deliveries of a batch need before their send.
const viewsSQL = "SELECT oficina_dispatch_views(?, ?, ?)"

// prepareTx checks each delivery before its send: still pending, its
// endpoint exists and is enabled, the company's plan has the API and the
// subscriber still has access. Otherwise it closes the delivery (no attempt
// used) and its plan sends nothing. The checks of the whole batch are one
// call of oficina_dispatch_views. rec, when set, are the arguments of the
// cycle's successes (succeededSQL): they are recorded first, in the same
// statement, so a cycle of successes and prepares is one round trip between
// BEGIN and COMMIT.
func (d *Dispatcher) prepareTx(ctx context.Context, tx bun.Tx, dms []streams.DeliveryMessage, now time.Time, rec []any) ([]batchResult[plan], error) {
	if len(dms) == 0 {
		return nil, nil
	}
	out := make([]batchResult[plan], len(dms))
	var companies, dids, eids []string
	for _, dm := range dms {
		companies, dids, eids = append(companies, dm.CompanyID), append(dids, dm.DeliveryID), append(eids, dm.EndpointID)
	}
	query, args := viewsSQL, []any{pgdialect.Array(companies), pgdialect.Array(dids), pgdialect.Array(eids)}
	if rec != nil {
		// The CTE is read before the views are computed: the successes are
		// recorded first, as when they run on their own.
		query, args = "WITH r AS MATERIALIZED ("+succeededSQL+") "+viewsSQL+" FROM r", append(rec, args...)
	}
	var raw []byte
	if err := tx.QueryRowContext(ctx, query, args...).Scan(&raw); err != nil {
		return nil, fmt.Errorf("read views: %w", err)
	}
	views := map[string]*companyView{}
	if err := json.Unmarshal(raw, &views); err != nil {
		return nil, fmt.Errorf("decode views: %w", err)
	}
	for _, g := range byCompany(len(dms), func(i int) string { return dms[i].CompanyID }) {
		company := dms[g[0]].CompanyID
		v := views[company]
		if v == nil || v.Company == nil {
			return nil, fmt.Errorf("company %s: %w", company, sql.ErrNoRows)
		}
		if err := d.prepareCompany(ctx, tx, company, v, dms, g, out, now); err != nil {
			return nil, err
		}
	}
	return out, nil
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
	Endpoints []webhooks.Row  `json:"endpoints"`
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
		return tenant.Scope(ctx, tx, company)
	}
	planOK := v.Company.Plan.Limits().API && v.Company.APIEnabled
	status := map[string]string{}
	for _, dl := range v.Deliveries {
		status[dl.ID] = dl.Status
	}
	endpoints := map[string]*webhooks.Row{}
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
		keys, err := signingKeys(e, d.cfg.Secrets, now)
		if err != nil {
			// A key missing from the ring, or a value that does not open:
			// the attempt fails (and is retried on the schedule, so putting
			// the key back saves the delivery). The error names the key id
			// and the endpoint, never a secret.
			d.cfg.Logger().Error("dispatch: cannot open the endpoint's signing secret", "company", company,
				"endpoint", e.ID, "key_id", e.KeyID, "err", err)
		}
		out[i].res = plan{send: true, url: e.URL, keys: keys, failing: e.FailingSince != nil}
	}
	return nil
}

// closeDelivery fails a pending delivery without an attempt.
func closeDelivery(ctx context.Context, tx bun.Tx, id, reason string, now time.Time) error {
	_, err := tx.NewUpdate().Model((*streams.Delivery)(nil)).Set("status = ?", streams.StatusFailed).
		Set("error = ?", reason).Set("completed_at = ?", now).Set("next_attempt_at = NULL").
		Set("updated_at = ?", now).Where("id = ?", id).Where("status = ?", streams.StatusPending).Exec(ctx)
	return err
}

// accessLost closes the delivery and, once per loss, mails the owners and
// admins; the flag is cleared by the next successful delivery.
func (d *Dispatcher) accessLost(ctx context.Context, tx bun.Tx, e *webhooks.Row, dm streams.DeliveryMessage, now time.Time) error {
	if err := closeDelivery(ctx, tx, dm.DeliveryID, ErrSubscriberAccessLost, now); err != nil {
		return err
	}
	res, err := tx.NewUpdate().Model((*webhooks.Row)(nil)).Set("access_lost_notified_at = ?", now).
		Where("id = ?", e.ID).Where("access_lost_notified_at IS NULL").Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	d.cfg.Logger().Warn("webhook subscriber lost access", "company", e.CompanyID, "endpoint", e.ID, "event_type", dm.EventType)
	body := fmt.Sprintf("O assinante do endpoint de webhook %s (%s) perdeu o acesso aos eventos %q.\n"+
		"As entregas afetadas foram encerradas com o erro %s; o endpoint continua ativo e os eventos "+
		"de outros módulos continuam chegando. Restaure a permissão ou edite o endpoint.\n",
		e.ID, e.URL, dm.EventType, ErrSubscriberAccessLost)
	_, err = mail.ToManagers(ctx, tx, e.CompanyID, MailAccessLost, "Webhook: assinante sem acesso", body, now)
	return err
}

// signingKeys are the HMAC keys an attempt at `at` is signed with: the
// current secret's, plus the previous one's while its rotation grace
// lasts. The secrets are opened with ring here, in memory only.
func signingKeys(e *webhooks.Row, ring *secretbox.Keyring, at time.Time) ([][]byte, error) {
	s, err := e.SealedSecrets.Open(ring, e.CompanyID, e.ID)
	if err != nil {
		return nil, err
	}
	secrets := s.Signing(e.PreviousSecretExpiresAt, at)
	keys := make([][]byte, 0, len(secrets))
	for _, secret := range secrets {
		k, err := signing.ParseSecret(secret)
		if err != nil {
			return nil, fmt.Errorf("dispatch: endpoint %s: %w", e.ID, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// subscriberAllowed reports whether the endpoint's subscriber may still
// receive eventType now: the member m is active and its role and
// permissions allow <module>:read; when subscribed through a key, the key k
// is active, holds <module>:read and its creator's role (which caps the
// key) allows it too. A ping (no module) needs only active member and key.
// A nil member or key (deleted) has no access.
func subscriberAllowed(e *webhooks.Row, m *tenant.Member, k *tenant.APIKey, creator *tenant.Member, eventType string, now time.Time) bool {
	if m == nil {
		return false
	}
	p := &tenant.Principal{Member: *m, CreatorRole: m.Role}
	if e.SubscriberKeyID != nil {
		if k == nil || !k.Active(now) {
			return false
		}
		p.Key = *k
		if creator != nil {
			p.CreatorRole = creator.Role
		}
	}
	if m.Status != "active" {
		return false
	}
	module := events.ModuleOf(eventType)
	if eventType == streams.PingType || module == "" {
		return true
	}
	if e.SubscriberKeyID != nil && !p.HasKeyPermission(tenant.Perm(module, tenant.Read)) {
		return false
	}
	return p.MemberAllows(module, tenant.Read)
}
