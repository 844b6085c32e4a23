package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/field"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// certEndpoint registers an endpoint of co with a client certificate valid
// until until (none when zero), at now.
func certEndpoint(t *testing.T, co *testkit.Company, until, now time.Time) *webhooks.Row {
	t.Helper()
	in := webhooks.WebhookEndpointCreate{URL: "https://hooks.example.com/mtls", Events: []webhooks.EventName{"*"}}
	if !until.IsZero() {
		cert, key, _ := testkit.ClientCertificate(t, "mtls", until)
		in.ClientCertificate = &webhooks.WebhookClientCertificateInput{Certificate: cert, PrivateKey: key}
	}
	var e *webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) (err error) {
		e, err = webhooks.Create(ctx, tx, co.Company.ID, in, webhooks.Subscriber{MemberID: co.Owner.ID}, allow, testkit.AnyURL{},
			testkit.Keyring(t), now)
		return err
	})
	return e
}

// warnAt runs the company's certificate warning at now (a business time)
// and returns how many endpoints it warned.
func warnAt(t *testing.T, co *testkit.Company, now time.Time) int {
	t.Helper()
	var n int
	wr := &streams.Writer{DB: co.DB}
	err := wr.Run(context.Background(), webhooks.CertificateUnit(co.Company.ID, now), func(ctx context.Context, w *streams.Write) (err error) {
		n, err = webhooks.WarnExpiringCertificates(ctx, w)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue 27 item 2: webhook_endpoint.client_certificate_expiring is sent
// once per certificate, CertificateWarning before it expires, however often
// the routine runs; a new certificate is warned about in its turn; an
// endpoint without one never.
func TestAClientCertificateIsWarnedAboutOncePerCertificate(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	now := time.Now().UTC().Truncate(time.Second)
	ep := certEndpoint(t, co, now.Add(webhooks.CertificateWarning+24*time.Hour), now)
	certEndpoint(t, co, time.Time{}, now)
	log := co.Events()
	for _, step := range []struct {
		name string
		at   time.Time
		want int
	}{
		{"more than CertificateWarning ahead", now, 0},
		{"within CertificateWarning", now.Add(2 * 24 * time.Hour), 1},
		{"the routine again", now.Add(2*24*time.Hour + 15*time.Minute), 0},
		{"a day later", now.Add(3 * 24 * time.Hour), 0},
	} {
		if n := warnAt(t, co, step.at); n != step.want {
			t.Errorf("%s: warned %d, want %d", step.name, n, step.want)
		}
	}
	evs := log.Next(t)
	if len(evs) != 1 || evs[0].Type != webhooks.EventEndpointCertificateExpiring || evs[0].Data.Object["id"] != ep.ID ||
		evs[0].Data.ObjectTruncated || evs[0].Data.Object["client_certificate"] == nil {
		t.Fatalf("events %+v, want one %s about %s, whole", evs, webhooks.EventEndpointCertificateExpiring, ep.ID)
	}

	// A new certificate, valid a month from the third day: warned in its
	// turn, once.
	later := now.Add(3 * 24 * time.Hour)
	cert, key, _ := testkit.ClientCertificate(t, "mtls-2", later.Add(30*24*time.Hour))
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := webhooks.Update(ctx, tx, ep.ID, webhooks.WebhookEndpointUpdate{ClientCertificate: field.Opt[webhooks.WebhookClientCertificateInput]{
			Set: true, Value: webhooks.WebhookClientCertificateInput{Certificate: cert, PrivateKey: key}}},
			webhooks.Subscriber{MemberID: co.Owner.ID}, allow, testkit.AnyURL{}, testkit.Keyring(t), later)
		return err
	})
	for _, step := range []struct {
		at   time.Time
		want int
	}{{later, 0}, {later.Add(20 * 24 * time.Hour), 1}, {later.Add(21 * 24 * time.Hour), 0}} {
		if n := warnAt(t, co, step.at); n != step.want {
			t.Errorf("the new certificate at %s: warned %d, want %d", step.at, n, step.want)
		}
	}
	if evs := log.Next(t); len(evs) != 1 || evs[0].Data.Object["id"] != ep.ID {
		t.Errorf("events for the new certificate %+v, want one", evs)
	}
}

// The routine across companies (ops/stack runs it every quarter hour, the
// admin API on demand): the definer function names only the companies with
// a certificate to warn about, each warned in its own write unit. A
// scratch database: the routine over the shared one would warn other
// tests' endpoints.
func TestTheCertificateRoutineFindsTheCompaniesToWarn(t *testing.T) {
	t.Parallel()
	app, worker := testkit.ScratchPools(t, testkit.ScratchDB(t, "certwarn"))
	now := time.Now().UTC().Truncate(time.Second)
	soon := testkit.NewCompanyIn(t, app, tenant.CompanyInput{})
	ep := certEndpoint(t, soon, now.Add(7*24*time.Hour), now)
	certEndpoint(t, testkit.NewCompanyIn(t, app, tenant.CompanyInput{}), now.Add(60*24*time.Hour), now)
	certEndpoint(t, testkit.NewCompanyIn(t, app, tenant.CompanyInput{}), time.Time{}, now)
	wr := &streams.Writer{DB: app}
	for i, want := range []int{1, 0} {
		n, err := webhooks.WarnExpiringCertificatesAll(context.Background(), wr, worker, now)
		if err != nil || n != want {
			t.Fatalf("run %d: warned %d (%v), want %d", i+1, n, err, want)
		}
	}
	if evs := soon.Events().All(t); len(evs) != 1 || evs[0].Data.Object["id"] != ep.ID {
		t.Errorf("events %+v, want the one warning", evs)
	}
}
