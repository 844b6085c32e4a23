package dispatch

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"oficina/schema/events"
	"oficina/schema/secretbox"
	"oficina/schema/signing"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// The prepare stage: what a delivery needs before its send, read in the
// cycle's statement (cycle.go), and whether it is to be closed without an
// attempt instead — a close the record stage writes, as any outcome.

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
	send     bool
	url      string
	keys     [][]byte
	failing  bool
	thin     bool                        // the endpoint takes thin payloads (envelope.Thin)
	headers  map[string]string           // the endpoint's custom headers, opened
	cert     *webhooks.ClientCertificate // presented to a receiver that asks (mutual TLS)
	oauth2   *webhooks.OAuth2            // the client credentials of its bearer token
	attempts int                         // the delivery's attempts before this one: its retry schedule's place
	closed   string                      // why the delivery is to be closed without an attempt, if it is
	blocked  *orderWait                  // nothing to send yet: deliveries of its object before it are pending
}

// orderWait is why a delivery to an endpoint with ordering "object" is not
// sent yet (decision 0039): the deliveries of its object recorded before
// it and still pending, nearest first, and the next attempt of the
// earliest of them (nil when it has none scheduled: it is about to be
// tried, or waits itself).
type orderWait struct {
	on    []string
	until *time.Time
}

// viewsCall reads what the deliveries of a batch need before their send.
const viewsCall = "oficina_dispatch_views(?, ?, ?)"

// prepare checks each delivery of dms before its send, from raw, the
// cycle's views (oficina_dispatch_views): still pending, its endpoint
// exists and is enabled, the company's plan has the API and the subscriber
// still has access. Otherwise its plan sends nothing and, when the
// delivery is to be failed, says why (closed): the caller records that
// outcome (no attempt used).
func (d *Dispatcher) prepare(dms []streams.DeliveryMessage, raw []byte, now time.Time) ([]batchResult[plan], error) {
	if len(dms) == 0 {
		return nil, nil
	}
	out := make([]batchResult[plan], len(dms))
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
		d.prepareCompany(company, v, dms, g, out, now)
	}
	return out, nil
}

// companyView is what oficina_dispatch_views returns of one company: the
// batch's deliveries, their endpoints, the plan, the subscribing keys and
// members (and the keys' creators).
type companyView struct {
	Deliveries []struct {
		ID           string `json:"id"`
		Status       string `json:"status"`
		EventType    string `json:"event_type"`
		AttemptCount int    `json:"attempt_count"`
		// The object's deliveries before it still pending (an ordered
		// endpoint's only), and the earliest's next attempt.
		WaitsOn           []string   `json:"waits_on"`
		HeadNextAttemptAt *time.Time `json:"head_next_attempt_at"`
	} `json:"deliveries"`
	Endpoints []webhooks.Row  `json:"endpoints"`
	Company   *tenant.Company `json:"company"`
	Keys      []tenant.APIKey `json:"keys"`
	Members   []tenant.Member `json:"members"`
}

// prepareCompany decides for the deliveries idx of one company from its
// view.
func (d *Dispatcher) prepareCompany(company string, v *companyView, dms []streams.DeliveryMessage, idx []int, out []batchResult[plan], now time.Time) {
	planOK := v.Company.Plan.Limits().API && v.Company.APIEnabled
	status, attempts, waits := map[string]string{}, map[string]int{}, map[string]*orderWait{}
	for _, dl := range v.Deliveries {
		status[dl.ID], attempts[dl.ID] = dl.Status, dl.AttemptCount
		if len(dl.WaitsOn) > 0 {
			waits[dl.ID] = &orderWait{on: dl.WaitsOn, until: dl.HeadNextAttemptAt}
		}
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
			out[i].res.closed = ErrEndpointDisabled
			continue
		case !planOK:
			out[i].res.closed = ErrPlanWithoutAPI
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
			out[i].res.closed = ErrSubscriberAccessLost
			continue
		}
		if w := waits[dm.DeliveryID]; w != nil {
			// Its object's deliveries before it come first (the views
			// list them only while the endpoint orders by object).
			out[i].res.blocked = w
			continue
		}
		keys, opened, err := signingKeys(e, d.cfg.Secrets, now)
		if err != nil {
			// A key missing from the ring, or a value that does not open:
			// the attempt fails (and is retried on the schedule, so putting
			// the key back saves the delivery). The error names the key id
			// and the endpoint, never a secret.
			d.cfg.Logger().Error("dispatch: cannot open the endpoint's signing secret", "company", company,
				"endpoint", e.ID, "key_id", e.KeyID, "err", err)
		}
		out[i].res = plan{send: true, url: e.URL, keys: keys, headers: opened.Headers, cert: opened.ClientCertificate,
			oauth2:  e.OAuth2Of(opened),
			failing: e.FailingSince != nil, thin: e.Payload == webhooks.PayloadThin,
			attempts: attempts[dm.DeliveryID]}
	}
}

// signingKeys are the HMAC keys an attempt at `at` is signed with: the
// current secret's, plus the previous one's while its rotation grace
// lasts; and the endpoint's custom headers. The secrets are opened with
// ring here, in memory only.
func signingKeys(e *webhooks.Row, ring *secretbox.Keyring, at time.Time) ([][]byte, webhooks.Secrets, error) {
	s, err := e.SealedSecrets.Open(ring, e.CompanyID, e.ID)
	if err != nil {
		return nil, webhooks.Secrets{}, err
	}
	secrets := s.Signing(e.PreviousSecretExpiresAt, at)
	keys := make([][]byte, 0, len(secrets))
	for _, secret := range secrets {
		k, err := signing.ParseSecret(secret)
		if err != nil {
			return nil, webhooks.Secrets{}, fmt.Errorf("dispatch: endpoint %s: %w", e.ID, err)
		}
		keys = append(keys, k)
	}
	return keys, s, nil
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
