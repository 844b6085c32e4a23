package dispatch

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/schema/ids"
	"oficina/schema/mail"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// The record stage: every outcome of a cycle — each attempt made and each
// delivery closed without one — with its delivery's new state and its
// endpoint's health, written by one call of oficina_dispatch_record
// (sql/oficina_dispatch_record.sql) in the cycle's transaction (cycle.go).
// Go decides only what needs Go: whether an attempt succeeded, and when a
// failure's next attempt is due (Config.retryDelay); the function decides
// the rest, auto-disable included, and says what it did.

// ReasonFailing is the disabled_reason of an endpoint disabled by the
// dispatcher after failing for Config.DisableAfter, and
// ReasonReceiverRequested of one whose receiver answered
// "webhook-delivery: disable" (written by oficina_dispatch_record).
const (
	ReasonFailing           = "failing"
	ReasonReceiverRequested = "receiver_requested"
)

// MailEndpointDisabled is the mail kind sent when the dispatcher disables
// an endpoint.
const MailEndpointDisabled = "webhook_endpoint_disabled"

// outcome is what handling one message decided.
type outcome struct {
	sent    bool      // an attempt was made
	ok      bool      // the attempt succeeded (2xx)
	failing bool      // the endpoint is failing after this message
	retryAt time.Time // wall-clock time of the next attempt; zero = none
	// gaveUp: the delivery failed for good; disabled: so did its
	// endpoint; closed: the delivery was closed without an attempt (each
	// told to the Observer once committed).
	gaveUp, disabled, closed bool
	// startedFailing and recovered: the endpoint's health turned with
	// this message (its first failure after a success, its first success
	// after failing); recorded then reports them as operational events.
	startedFailing, recovered bool
	// blocked: nothing was sent, as the delivery's object has deliveries
	// before it still pending on an endpoint that orders them.
	blocked *orderWait
}

// recordReq is one outcome to record: an attempt, or, when closed is set,
// a delivery closed without one for that reason.
type recordReq struct {
	dm      streams.DeliveryMessage
	closed  string // ErrEndpointDisabled, ErrPlanWithoutAPI or ErrSubscriberAccessLost
	started time.Time
	r       attemptResult
	// retry: a failed attempt has a next one, retryIn after it is
	// recorded; false when the attempts are exhausted.
	retry   bool
	retryIn time.Duration
	// disable: the receiver asked to disable its endpoint.
	disable bool
}

// recordCall is oficina_dispatch_record's call, with recordArgs.
const recordCall = "oficina_dispatch_record(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::interval)"

// recordArgs are recordCall's arguments for reqs, sorted by company and
// delivery, and that order: the function's "ord" n is reqs[order[n-1]]
// (nil when reqs is empty). The function locks a company's endpoints in id
// order before any of its deliveries, and the deliveries in the order
// given: id order, the publisher's, so the two never wait on each other in
// a cycle (make bench's hot tenant once deadlocked them).
func recordArgs(reqs []recordReq, now time.Time, disableAfter time.Duration) (args []any, order []int, err error) {
	if len(reqs) == 0 {
		return nil, nil, nil
	}
	order = make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := reqs[a].dm, reqs[b].dm
		return cmp.Or(cmp.Compare(x.CompanyID, y.CompanyID), cmp.Compare(x.DeliveryID, y.DeliveryID))
	})
	n := len(reqs)
	companies, endpoints, deliveries, outcomes := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	attempts, errs, details := make([]*string, n), make([]*string, n), make([]*string, n)
	started, retryAt, asked := make([]*time.Time, n), make([]*time.Time, n), make([]*string, n)
	codes := make([]*int, n)
	for k, i := range order {
		q := &reqs[i]
		if q.dm.CompanyID == "" {
			return nil, nil, tenant.ErrNoCompany
		}
		companies[k], endpoints[k], deliveries[k] = q.dm.CompanyID, q.dm.EndpointID, q.dm.DeliveryID
		if q.closed != "" {
			outcomes[k] = q.closed
			continue
		}
		outcomes[k] = "failed"
		if q.r.ok() {
			outcomes[k] = "succeeded"
		}
		attempts[k], started[k] = ptr(ids.New("wha")), &q.started
		if q.r.status != 0 {
			codes[k] = &q.r.status
		}
		if q.r.err != "" {
			errs[k] = &q.r.err
		}
		if q.r.detail != nil {
			b, err := json.Marshal(q.r.detail)
			if err != nil {
				return nil, nil, fmt.Errorf("attempt details: %w", err)
			}
			details[k] = ptr(string(b))
		}
		if !q.r.ok() && q.retry {
			retryAt[k] = ptr(now.Add(q.retryIn))
		}
		if q.disable {
			asked[k] = ptr(controlDisable)
		}
	}
	return []any{pgdialect.Array(companies), pgdialect.Array(endpoints), pgdialect.Array(deliveries),
		pgdialect.Array(outcomes), pgdialect.Array(attempts), pgdialect.Array(started), pgdialect.Array(codes),
		pgdialect.Array(errs), pgdialect.Array(details), pgdialect.Array(retryAt), pgdialect.Array(asked), now,
		fmt.Sprintf("%d microseconds", disableAfter.Microseconds())}, order, nil
}

func ptr[T any](v T) *T { return &v }

// recordRow is what oficina_dispatch_record says of one input.
type recordRow struct {
	Ord            int        `json:"ord"`
	Status         *string    `json:"status"` // nil: nothing recorded (the delivery is gone, or a close found it final)
	Closed         bool       `json:"closed"`
	GaveUp         bool       `json:"gave_up"`
	RetryAt        *time.Time `json:"retry_at"` // when the next attempt is due, on the business clock
	Failing        bool       `json:"failing"`
	StartedFailing bool       `json:"started_failing"`
	Recovered      bool       `json:"recovered"`
	Disabled       bool       `json:"disabled"`
	Notify         bool       `json:"notify"`
	// URL, FailingSince and the disabled Reason, with Disabled or
	// Notify: for the mail.
	URL          string     `json:"url"`
	FailingSince *time.Time `json:"failing_since"`
	Reason       string     `json:"reason"`
}

// recorded turns the function's rows (raw, its JSON) into the outcomes of
// reqs, and writes what it asks for after it: the mails of an endpoint
// disabled and of a subscriber's access lost, and the operational events of
// the endpoints' turns and the deliveries given up (rare; once each).
func (d *Dispatcher) recorded(ctx context.Context, tx bun.Tx, reqs []recordReq, order []int, raw []byte, now time.Time) ([]batchResult[outcome], error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	var rows []recordRow
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("decode the record: %w", err)
	}
	if len(rows) != len(reqs) {
		return nil, fmt.Errorf("the record answered %d rows for %d outcomes", len(rows), len(reqs))
	}
	// Rows come company by company; sorted again so the mails scope each
	// company once.
	slices.SortFunc(rows, func(a, b recordRow) int { return cmp.Compare(a.Ord, b.Ord) })
	out := make([]batchResult[outcome], len(reqs))
	scoped := ""
	var turns map[string]*webhooks.Turns // by company, made on the first turn
	for _, row := range rows {
		if row.Ord < 1 || row.Ord > len(order) {
			return nil, fmt.Errorf("the record answered ord %d", row.Ord)
		}
		q := &reqs[order[row.Ord-1]]
		o := outcome{sent: q.closed == "", ok: q.closed == "" && q.r.ok(), failing: row.Failing, closed: row.Closed,
			gaveUp: row.GaveUp, disabled: row.Disabled, startedFailing: row.StartedFailing, recovered: row.Recovered}
		if row.RetryAt != nil {
			o.retryAt = time.Now().Add(q.retryIn) // the server fires on its wall clock
		}
		out[order[row.Ord-1]] = batchResult[outcome]{res: o}
		d.logHealth(q.dm, row)
		if row.StartedFailing || row.Recovered || row.Disabled || row.GaveUp {
			turns = noteTurn(turns, q.dm, row)
		}
		if !row.Disabled && !row.Notify {
			continue
		}
		if scoped != q.dm.CompanyID {
			if err := tenant.Scope(ctx, tx, q.dm.CompanyID); err != nil {
				return nil, err
			}
			scoped = q.dm.CompanyID
		}
		if err := d.mail(ctx, tx, q.dm, row, now); err != nil {
			return nil, err
		}
	}
	for _, co := range slices.Sorted(maps.Keys(turns)) {
		if scoped != co {
			if err := tenant.Scope(ctx, tx, co); err != nil {
				return nil, err
			}
			scoped = co
		}
		// In the cycle's transaction: an event exists exactly when the
		// turn it reports committed. The dispatcher publishes nothing, so
		// the events wait in the backlog for the relay (decision 0037).
		w := &streams.Write{Tx: tx, CompanyID: co, Actor: streams.Actor{Kind: streams.ActorSystem}, At: now, Wall: d.cfg.WallNow}
		if err := webhooks.RecordTurns(ctx, w, *turns[co]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// noteTurn adds what row says of dm's endpoint and delivery to the turns of
// its company (made when nil).
func noteTurn(turns map[string]*webhooks.Turns, dm streams.DeliveryMessage, row recordRow) map[string]*webhooks.Turns {
	if turns == nil {
		turns = map[string]*webhooks.Turns{}
	}
	t := turns[dm.CompanyID]
	if t == nil {
		t = &webhooks.Turns{}
		turns[dm.CompanyID] = t
	}
	if row.StartedFailing {
		t.Failing = append(t.Failing, dm.EndpointID)
	}
	if row.Recovered {
		t.Recovered = append(t.Recovered, dm.EndpointID)
	}
	if row.GaveUp {
		t.GivenUp = append(t.GivenUp, dm.DeliveryID)
	}
	if row.Disabled {
		t.Disabled = append(t.Disabled, dm.EndpointID)
	}
	return turns
}

// logHealth logs an endpoint's turn, once per turn.
func (d *Dispatcher) logHealth(dm streams.DeliveryMessage, row recordRow) {
	log := d.cfg.Logger()
	switch {
	case row.Disabled && row.Reason == ReasonReceiverRequested:
		log.Warn("webhook endpoint disabled: its receiver asked", "company", dm.CompanyID, "endpoint", dm.EndpointID)
	case row.Disabled:
		log.Warn("webhook endpoint disabled after failing", "company", dm.CompanyID, "endpoint", dm.EndpointID, "since", row.FailingSince)
	case row.StartedFailing:
		log.Info("webhook endpoint failing", "company", dm.CompanyID, "endpoint", dm.EndpointID)
	case row.Recovered:
		log.Info("webhook endpoint recovered", "company", dm.CompanyID, "endpoint", dm.EndpointID)
	}
	if row.Notify {
		log.Warn("webhook subscriber lost access", "company", dm.CompanyID, "endpoint", dm.EndpointID, "event_type", dm.EventType)
	}
}

// mail tells the company's owners and admins that the endpoint of dm was
// disabled, or that its subscriber lost access to dm's event type, as row
// says; the transaction is scoped to the company.
func (d *Dispatcher) mail(ctx context.Context, tx bun.Tx, dm streams.DeliveryMessage, row recordRow, now time.Time) error {
	var kind, subject, body string
	switch {
	case row.Disabled && row.Reason == ReasonReceiverRequested:
		kind, subject = MailEndpointDisabled, "Webhook desativado: "+row.URL
		body = fmt.Sprintf("O receptor do endpoint de webhook %s (%s) pediu, na resposta a uma entrega "+
			"(webhook-delivery: disable), que o endpoint fosse desativado, e ele foi desativado (motivo: %s). "+
			"Reative o endpoint quando o receptor voltar a aceitar entregas; as perdidas podem ser reenviadas.\n",
			dm.EndpointID, row.URL, ReasonReceiverRequested)
	case row.Disabled:
		since := ""
		if row.FailingSince != nil {
			since = row.FailingSince.UTC().Format(time.RFC3339)
		}
		kind, subject = MailEndpointDisabled, "Webhook desativado: "+row.URL
		body = fmt.Sprintf("O endpoint de webhook %s (%s) falhou em todas as entregas desde %s e foi desativado "+
			"(motivo: %s). Corrija o receptor e reative o endpoint; as entregas perdidas podem ser reenviadas.\n",
			dm.EndpointID, row.URL, since, ReasonFailing)
	default:
		kind, subject = MailAccessLost, "Webhook: assinante sem acesso"
		body = fmt.Sprintf("O assinante do endpoint de webhook %s (%s) perdeu o acesso aos eventos %q.\n"+
			"As entregas afetadas foram encerradas com o erro %s; o endpoint continua ativo e os eventos "+
			"de outros módulos continuam chegando. Restaure a permissão ou edite o endpoint.\n",
			dm.EndpointID, row.URL, dm.EventType, ErrSubscriberAccessLost)
	}
	if _, err := mail.ToManagers(ctx, tx, dm.CompanyID, kind, subject, body, now); err != nil {
		return fmt.Errorf("mail %s: %w", kind, err)
	}
	return nil
}
