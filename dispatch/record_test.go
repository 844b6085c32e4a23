package dispatch_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/schema/ids"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// recordInput is one outcome given to oficina_dispatch_record.
type recordInput struct {
	co      *testkit.Company
	ep      *webhooks.Row
	dm      streams.DeliveryMessage
	outcome string // succeeded, failed or a close reason
	code    *int
	err     *string
	retryAt *time.Time
	asked   *string // the receiver's webhook-delivery request
}

// recordOutput is what oficina_dispatch_record says of one input.
type recordOutput struct {
	Ord            int        `json:"ord"`
	Status         *string    `json:"status"`
	Closed         bool       `json:"closed"`
	GaveUp         bool       `json:"gave_up"`
	RetryAt        *time.Time `json:"retry_at"`
	Failing        bool       `json:"failing"`
	StartedFailing bool       `json:"started_failing"`
	Recovered      bool       `json:"recovered"`
	Disabled       bool       `json:"disabled"`
	Reason         string     `json:"reason"`
	Notify         bool       `json:"notify"`
	URL            *string    `json:"url"`
}

const disableAfter = 72 * time.Hour

// callRecord records ins at now in one call, as the dispatcher's worker
// role does, inside a transaction scoped to caller's company, and returns
// the function's answer by input (ord order) and the company the
// transaction is scoped to afterwards.
func callRecord(t *testing.T, caller *testkit.Company, now time.Time, ins ...recordInput) ([]recordOutput, string) {
	t.Helper()
	var companies, endpoints, deliveries, outcomes, aids, details []string
	var started []time.Time
	var codes []*int
	var errs []*string
	var retry []*time.Time
	var asked []*string
	for _, in := range ins {
		asked = append(asked, in.asked)
		companies, endpoints, deliveries = append(companies, in.co.Company.ID), append(endpoints, in.ep.ID), append(deliveries, in.dm.DeliveryID)
		outcomes, aids = append(outcomes, in.outcome), append(aids, ids.New("wha"))
		started, codes, errs, retry = append(started, now.Add(-time.Second)), append(codes, in.code), append(errs, in.err), append(retry, in.retryAt)
		details = append(details, `{"request_headers":{"Webhook-Signature":["v1,x"]},"duration_ms":7}`)
	}
	var raw []byte
	var scoped string
	err := tenant.Tx(context.Background(), testkit.WorkerDB(t), caller.Company.ID, func(ctx context.Context, tx bun.Tx) error {
		err := tx.QueryRowContext(ctx, "SELECT oficina_dispatch_record(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::interval)",
			pgdialect.Array(companies), pgdialect.Array(endpoints), pgdialect.Array(deliveries), pgdialect.Array(outcomes),
			pgdialect.Array(aids), pgdialect.Array(started), pgdialect.Array(codes), pgdialect.Array(errs),
			pgdialect.Array(details), pgdialect.Array(retry), pgdialect.Array(asked), now, "72 hours").Scan(&raw)
		if err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, "SELECT current_setting('app.company_id', true)").Scan(&scoped)
	})
	if err != nil {
		t.Fatal(err)
	}
	var outs []recordOutput
	if err := json.Unmarshal(raw, &outs); err != nil {
		t.Fatal(err)
	}
	byOrd := make([]recordOutput, len(ins))
	for _, o := range outs {
		byOrd[o.Ord-1] = o
	}
	if len(outs) != len(ins) {
		t.Fatalf("answered %d rows for %d inputs: %s", len(outs), len(ins), raw)
	}
	return byOrd, scoped
}

// asWorker runs fn in co's transaction as the worker role (which may
// update what the dispatcher updates).
func asWorker(t *testing.T, co *testkit.Company, fn func(ctx context.Context, tx bun.Tx) error) {
	t.Helper()
	if err := tenant.Tx(context.Background(), testkit.WorkerDB(t), co.Company.ID, fn); err != nil {
		t.Fatal(err)
	}
}

// Issue 25 item 3: every outcome — a success, a failure (a status, a
// timeout, a refusal) retried or given up, an auto-disable, the closes
// without an attempt, manual first attempts — is recorded by the one
// function, oficina_dispatch_record, which writes the delivery's state, the
// attempt row with its trigger and next attempt, and the endpoint's health,
// and says what it did.
func TestEveryOutcomeIsRecordedByTheOneFunction(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	retryAt := now.Add(5 * time.Minute)
	type before struct {
		kind       string        // the delivery's kind; "" = event
		attempts   int           // the delivery's attempts so far
		status     string        // the delivery's status; "" = pending
		failingFor time.Duration // how long the endpoint has been failing; 0 = healthy
		notified   bool          // the endpoint's access loss was mailed
		disabled   bool          // the endpoint was disabled by hand
		asks       string        // the answer's webhook-delivery request ("disable"), issue 27 item 3
	}
	type want struct {
		status, err string // the delivery's status and error after
		attempts    int
		trigger     string // the attempt row's triggered_by; "" = no attempt row
		retry       bool   // the delivery waits for retryAt
		out         recordOutput
		epFailing   bool // the endpoint has failing_since after
		epSince     time.Duration
		epNotified  bool
		epStatus    string
	}
	code := func(c int) *int { return &c }
	reason := func(s string) *string { return &s }
	tests := []struct {
		name    string
		before  before
		outcome string
		code    *int
		err     *string
		retry   bool
		want    want
	}{
		{"a success succeeds a pending delivery", before{}, "succeeded", code(200), nil, false,
			want{status: "succeeded", attempts: 1, trigger: "automatic", out: recordOutput{Status: reason("succeeded")}, epStatus: "enabled"}},
		{"a success clears a failing endpoint and its access-lost mark: it recovered", before{failingFor: time.Hour, notified: true},
			"succeeded", code(204), nil, false,
			want{status: "succeeded", attempts: 1, trigger: "automatic", out: recordOutput{Status: reason("succeeded"), Recovered: true}, epStatus: "enabled"}},
		{"a failure waits for the retry time given, and the endpoint starts failing", before{}, "failed", code(503), nil, true,
			want{status: "pending", attempts: 1, trigger: "automatic", retry: true, epFailing: true, epStatus: "enabled",
				out: recordOutput{Status: reason("pending"), RetryAt: &retryAt, Failing: true, StartedFailing: true}}},
		{"a timeout is a failure without a status", before{}, "failed", nil, reason("timeout"), true,
			want{status: "pending", err: "timeout", attempts: 1, trigger: "automatic", retry: true, epFailing: true, epStatus: "enabled",
				out: recordOutput{Status: reason("pending"), RetryAt: &retryAt, Failing: true, StartedFailing: true}}},
		{"a refused destination is a failure without a status", before{}, "failed", nil, reason("destination_refused: private_address"), true,
			want{status: "pending", err: "destination_refused: private_address", attempts: 1, trigger: "automatic", retry: true,
				epFailing: true, epStatus: "enabled", out: recordOutput{Status: reason("pending"), RetryAt: &retryAt, Failing: true, StartedFailing: true}}},
		{"a failure of an endpoint already failing keeps its start", before{attempts: 2, failingFor: time.Hour}, "failed", code(500), nil, true,
			want{status: "pending", attempts: 3, trigger: "automatic", retry: true, epFailing: true, epSince: time.Hour, epStatus: "enabled",
				out: recordOutput{Status: reason("pending"), RetryAt: &retryAt, Failing: true}}},
		{"a failure without a retry time gives up: attempts exhausted", before{attempts: 10, failingFor: time.Hour}, "failed", code(502), nil, false,
			want{status: "failed", attempts: 11, trigger: "automatic", epFailing: true, epSince: time.Hour, epStatus: "enabled",
				out: recordOutput{Status: reason("failed"), GaveUp: true, Failing: true}}},
		{"a failure after DisableAfter of failing disables the endpoint and gives up", before{attempts: 3, failingFor: disableAfter},
			"failed", code(500), nil, true,
			want{status: "failed", attempts: 4, trigger: "automatic", epFailing: true, epSince: disableAfter, epStatus: "disabled",
				out: recordOutput{Status: reason("failed"), GaveUp: true, Failing: true, Disabled: true}}},
		{"a failure of an endpoint disabled meanwhile gives up", before{disabled: true}, "failed", code(500), nil, true,
			want{status: "failed", attempts: 1, trigger: "automatic", epFailing: true, epStatus: "disabled",
				out: recordOutput{Status: reason("failed"), GaveUp: true, Failing: true, StartedFailing: true}}},
		{"a resend's first attempt is manual", before{kind: streams.KindResend}, "succeeded", code(200), nil, false,
			want{status: "succeeded", attempts: 1, trigger: "manual", out: recordOutput{Status: reason("succeeded")}, epStatus: "enabled"}},
		{"a resend's retry is automatic", before{kind: streams.KindResend, attempts: 1, failingFor: time.Minute}, "succeeded", code(200), nil, false,
			want{status: "succeeded", attempts: 2, trigger: "automatic", out: recordOutput{Status: reason("succeeded"), Recovered: true}, epStatus: "enabled"}},
		{"a ping's first attempt is manual", before{kind: streams.KindPing}, "failed", code(404), nil, true,
			want{status: "pending", attempts: 1, trigger: "manual", retry: true, epFailing: true, epStatus: "enabled",
				out: recordOutput{Status: reason("pending"), RetryAt: &retryAt, Failing: true, StartedFailing: true}}},
		{"an attempt of a delivery already final counts but keeps its status", before{status: "succeeded", attempts: 1}, "failed", code(500), nil, true,
			want{status: "succeeded", attempts: 2, trigger: "automatic", epFailing: true, epStatus: "enabled",
				out: recordOutput{Status: reason("succeeded"), Failing: true, StartedFailing: true}}},
		{"access lost closes the delivery without an attempt and asks for the mail", before{}, dispatch.ErrSubscriberAccessLost, nil, nil, false,
			want{status: "failed", err: dispatch.ErrSubscriberAccessLost, epNotified: true, epStatus: "enabled",
				out: recordOutput{Status: reason("failed"), Closed: true, Notify: true}}},
		{"access lost again before a success asks for no mail", before{notified: true}, dispatch.ErrSubscriberAccessLost, nil, nil, false,
			want{status: "failed", err: dispatch.ErrSubscriberAccessLost, epNotified: true, epStatus: "enabled",
				out: recordOutput{Status: reason("failed"), Closed: true}}},
		{"a plan without the API closes the delivery without an attempt", before{}, dispatch.ErrPlanWithoutAPI, nil, nil, false,
			want{status: "failed", err: dispatch.ErrPlanWithoutAPI, epStatus: "enabled", out: recordOutput{Status: reason("failed"), Closed: true}}},
		{"a disabled endpoint closes the delivery without an attempt", before{disabled: true}, dispatch.ErrEndpointDisabled, nil, nil, false,
			want{status: "failed", err: dispatch.ErrEndpointDisabled, epStatus: "disabled", out: recordOutput{Status: reason("failed"), Closed: true}}},
		{"a close of a delivery no longer pending changes nothing", before{status: "succeeded", attempts: 1}, dispatch.ErrEndpointDisabled, nil, nil, false,
			want{status: "succeeded", attempts: 1, epStatus: "enabled", out: recordOutput{}}},
		{"a success whose receiver asks to disable disables the endpoint at once", before{asks: "disable"}, "succeeded", code(200), nil, false,
			want{status: "succeeded", attempts: 1, trigger: "automatic", epStatus: "disabled",
				out: recordOutput{Status: reason("succeeded"), Disabled: true}}},
		{"a failure whose receiver asks to disable is not retried: the endpoint is disabled", before{asks: "disable"}, "failed", code(410), nil, true,
			want{status: "failed", attempts: 1, trigger: "automatic", epFailing: true, epStatus: "disabled",
				out: recordOutput{Status: reason("failed"), GaveUp: true, Failing: true, StartedFailing: true, Disabled: true}}},
		{"a receiver asking to disable an endpoint disabled by hand changes nothing more", before{asks: "disable", disabled: true}, "succeeded",
			code(200), nil, false,
			want{status: "succeeded", attempts: 1, trigger: "automatic", epStatus: "disabled", out: recordOutput{Status: reason("succeeded")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			co := company(t, tenant.PlanSupra)
			ep := newEndpoint(t, co, "https://hooks.example.com/", webhooks.Subscriber{MemberID: co.Owner.ID})
			dm := recordDelivery(t, co, ep, "sale.paid")
			b := tt.before
			asWorker(t, co, func(ctx context.Context, tx bun.Tx) error {
				kind, status := b.kind, b.status
				if kind == "" {
					kind = streams.KindEvent
				}
				if status == "" {
					status = streams.StatusPending
				}
				if _, err := tx.ExecContext(ctx, "UPDATE webhook_deliveries SET kind = ?, status = ?, attempt_count = ? WHERE id = ?",
					kind, status, b.attempts, dm.DeliveryID); err != nil {
					return err
				}
				var since, notified *time.Time
				if b.failingFor > 0 {
					since = testkitPtr(now.Add(-b.failingFor))
				}
				if b.notified {
					notified = &now
				}
				st := webhooks.StatusEnabled
				if b.disabled {
					st = webhooks.StatusDisabled
				}
				_, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET failing_since = ?, access_lost_notified_at = ?, status = ? WHERE id = ?",
					since, notified, st, ep.ID)
				return err
			})
			var at *time.Time
			if tt.retry {
				at = &retryAt
			}
			caller := company(t, tenant.PlanSupra)
			var asks *string
			if b.asks != "" {
				asks = &b.asks
			}
			outs, scoped := callRecord(t, caller, now, recordInput{co: co, ep: ep, dm: dm, outcome: tt.outcome, code: tt.code, err: tt.err,
				retryAt: at, asked: asks})
			if scoped != caller.Company.ID {
				t.Errorf("the caller's transaction is scoped to %q after the call, want its own %q", scoped, caller.Company.ID)
			}

			got, w := outs[0], tt.want
			w.out.Ord = 1
			wantReason := dispatch.ReasonFailing
			if b.asks != "" {
				wantReason = dispatch.ReasonReceiverRequested
			}
			if w.out.Disabled || w.out.Notify {
				w.out.URL = &ep.URL
			}
			if w.out.Disabled {
				w.out.Reason = wantReason
			}
			if !sameOutput(got, w.out) {
				t.Errorf("answered %+v, want %+v", show(got), show(w.out))
			}
			d := delivery(t, co, dm.DeliveryID)
			if d.Status != w.status || ptrStr(d.Error) != orNil(w.err) || d.AttemptCount != w.attempts {
				t.Errorf("delivery %s, error %s, %d attempts; want %s, %s, %d", d.Status, ptrStr(d.Error), d.AttemptCount, w.status, orNil(w.err), w.attempts)
			}
			if w.retry != (d.NextAttemptAt != nil && d.NextAttemptAt.Equal(retryAt)) {
				t.Errorf("next attempt %v, want it at %v: %v", d.NextAttemptAt, retryAt, w.retry)
			}
			as := attempts(t, co, dm.DeliveryID)
			switch {
			case w.trigger == "" && len(as) != 0:
				t.Errorf("%d attempt rows, want none", len(as))
			case w.trigger != "" && len(as) != 1:
				t.Errorf("%d attempt rows, want one", len(as))
			case w.trigger != "":
				a := as[0]
				if ptrStr(a.TriggeredBy) != w.trigger || ptrStr(a.Error) != orNil(w.err) || !sameInt(a.ResponseStatusCode, tt.code) ||
					a.DurationMS == nil || *a.DurationMS != 7 || a.RequestHeaders["Webhook-Signature"][0] != "v1,x" {
					t.Errorf("attempt row: trigger %s, error %s, code %s, duration %s, headers %v", ptrStr(a.TriggeredBy), ptrStr(a.Error),
						intStr(a.ResponseStatusCode), intStr(a.DurationMS), a.RequestHeaders)
				}
				if (a.NextAttemptAt != nil) != w.retry {
					t.Errorf("the attempt's next attempt %v, want one: %v", a.NextAttemptAt, w.retry)
				}
			}
			e := endpointRow(t, co, ep.ID)
			if e.Status != w.epStatus || (e.FailingSince != nil) != w.epFailing || (e.AccessLostNotifiedAt != nil) != w.epNotified {
				t.Errorf("endpoint %s, failing since %v, notified %v; want %s, failing %v, notified %v", e.Status, e.FailingSince,
					e.AccessLostNotifiedAt, w.epStatus, w.epFailing, w.epNotified)
			}
			if w.epFailing && !e.FailingSince.Equal(now.Add(-w.epSince)) {
				t.Errorf("failing since %v, want %v", e.FailingSince, now.Add(-w.epSince))
			}
			if w.epStatus == webhooks.StatusDisabled && !b.disabled && ptrStr(e.DisabledReason) != wantReason {
				t.Errorf("disabled for %s, want %s", ptrStr(e.DisabledReason), wantReason)
			}
		})
	}
}

// Issue 25 item 3: one call records a cycle of several companies (each
// under its own company setting) and gives the caller its company back;
// an endpoint's turn is reported once, on one of its inputs, however many
// of its deliveries the cycle holds; a success and a failure of one
// endpoint in one cycle leave it failing from now (successes count first).
func TestOneCallRecordsACycleAndReportsEachTurnOnce(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	retryAt := now.Add(time.Minute)
	a, b := company(t, tenant.PlanSupra), company(t, tenant.PlanSupra)
	epA := newEndpoint(t, a, "https://a.example.com/", webhooks.Subscriber{MemberID: a.Owner.ID})
	epB := newEndpoint(t, b, "https://b.example.com/", webhooks.Subscriber{MemberID: b.Owner.ID})
	asWorker(t, b, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET failing_since = ? WHERE id = ?", now.Add(-time.Hour), epB.ID)
		return err
	})
	fail := func(co *testkit.Company, ep *webhooks.Row) recordInput {
		return recordInput{co: co, ep: ep, dm: recordDelivery(t, co, ep, "sale.paid"), outcome: "failed", code: testkitPtr(500), retryAt: &retryAt}
	}
	ok := func(co *testkit.Company, ep *webhooks.Row) recordInput {
		return recordInput{co: co, ep: ep, dm: recordDelivery(t, co, ep, "sale.paid"), outcome: "succeeded", code: testkitPtr(200)}
	}
	// A: three failures of a healthy endpoint. B: a failing endpoint, a
	// success then a failure.
	ins := []recordInput{fail(a, epA), ok(b, epB), fail(a, epA), fail(b, epB), fail(a, epA)}
	outs, scoped := callRecord(t, a, now, ins...)
	if scoped != a.Company.ID {
		t.Errorf("scoped to %q after the call, want the caller's %q", scoped, a.Company.ID)
	}
	var started, recovered int
	for i, o := range outs {
		if o.StartedFailing {
			started++
		}
		if o.Recovered {
			recovered++
		}
		if o.Status == nil || *o.Status != streams.StatusPending && ins[i].outcome == "failed" {
			t.Errorf("input %d: status %v, want pending (retried)", i, o.Status)
		}
		if d := delivery(t, ins[i].co, ins[i].dm.DeliveryID); d.AttemptCount != 1 {
			t.Errorf("input %d: %d attempts recorded, want 1", i, d.AttemptCount)
		}
	}
	if started != 1 || recovered != 0 {
		t.Errorf("reported %d starts of failing and %d recoveries, want 1 (A's) and 0 (B fails again)", started, recovered)
	}
	if e := endpointRow(t, a, epA.ID); e.FailingSince == nil || !e.FailingSince.Equal(now) {
		t.Errorf("A failing since %v, want %v", e.FailingSince, now)
	}
	if e := endpointRow(t, b, epB.ID); e.FailingSince == nil || !e.FailingSince.Equal(now) {
		t.Errorf("B failing since %v, want %v: its success cleared the hour-old start, its failure set it again", e.FailingSince, now)
	}
}

func sameOutput(a, b recordOutput) bool {
	same := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	sameTime := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	return a.Ord == b.Ord && same(a.Status, b.Status) && a.Closed == b.Closed && a.GaveUp == b.GaveUp && sameTime(a.RetryAt, b.RetryAt) &&
		a.Failing == b.Failing && a.StartedFailing == b.StartedFailing && a.Recovered == b.Recovered && a.Disabled == b.Disabled &&
		a.Notify == b.Notify && same(a.URL, b.URL) && a.Reason == b.Reason
}

func show(o recordOutput) string {
	b, _ := json.Marshal(o)
	return string(b)
}

func intStr(n *int) string {
	if n == nil {
		return "<nil>"
	}
	return strconv.Itoa(*n)
}

func sameInt(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func orNil(s string) string {
	if s == "" {
		return "<nil>"
	}
	return s
}
