package webhooks_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/ids"
	"oficina/schema/signing"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// sentHeaders are the request headers of one attempt at `at` as the
// dispatcher sends and keeps them: the signing headers and Content-Length.
func sentHeaders(t *testing.T, eventID string, body []byte, at time.Time) map[string][]string {
	t.Helper()
	h, err := signing.Headers([][]byte{make([]byte, signing.KeySize)}, eventID, at, body)
	if err != nil {
		t.Fatal(err)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return h
}

// Issue 25 item 2: an attempt stores the request headers that differ
// between attempts (the timestamp and the signature), and the log reads
// each attempt's headers exactly as sent: the headers every attempt
// repeats (webhook-id, content-type, user-agent, content-length) are
// rebuilt from the delivery's event. Rows stored with every header read as
// they are; a header sent with another value than the rebuilt one is kept;
// an attempt without headers stays without.
func TestTheRepeatedRequestHeadersAreRebuiltAsSentOnRead(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	ep := newEndpoint(t, co, testkit.Keyring(t))
	now := time.Now().UTC()
	logged := co.LogDelivery(t, ep.ID, "client.created", streams.StatusSucceeded, now)
	first, second := sentHeaders(t, logged.EventID, logged.Body, now), sentHeaders(t, logged.EventID, logged.Body, now.Add(time.Minute))
	other := maps.Clone(second)
	other["User-Agent"] = []string{"Oficina-Webhooks/2.0"} // a sender that changed
	tests := []struct {
		name   string
		stored map[string][]string // as the row holds them
		want   map[string][]string // as the log reads them
	}{
		{"an attempt keeps its timestamp and signature only", webhooks.HeadersToKeep(first, logged.EventID, len(logged.Body)), first},
		{"each attempt reads its own timestamp and signature", webhooks.HeadersToKeep(second, logged.EventID, len(logged.Body)), second},
		{"a row stored with every header reads as stored", first, first},
		{"a header sent with another value is kept", webhooks.HeadersToKeep(other, logged.EventID, len(logged.Body)), other},
		{"an attempt without a request has no headers", nil, nil},
	}
	if kept := webhooks.HeadersToKeep(first, logged.EventID, len(logged.Body)); !slices.Equal(slices.Sorted(maps.Keys(kept)),
		[]string{"Webhook-Signature", "Webhook-Timestamp"}) {
		t.Errorf("an attempt stores %v, want the timestamp and the signature only", kept)
	}
	for i, tt := range tests {
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.NewInsert().Model(&streams.Attempt{ID: ids.New("wha"), CompanyID: co.Company.ID, DeliveryID: logged.DeliveryID,
				EndpointID: ep.ID, StartedAt: now.Add(time.Duration(i) * time.Second), CreatedAt: now, RequestHeaders: tt.stored}).Exec(ctx)
			return err
		})
	}
	var as []webhooks.AttemptRow
	co.Tx(t, func(ctx context.Context, tx bun.Tx) (err error) {
		as, err = webhooks.Attempts(ctx, tx, logged.DeliveryID)
		return err
	})
	if len(as) != len(tests) {
		t.Fatalf("read %d attempts, want %d", len(as), len(tests))
	}
	for i, tt := range tests {
		if got := as[i].RequestHeaders; !equalHeaders(got, tt.want) {
			t.Errorf("%s: read %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Issue 25 item 2: once the event's day is past retention its body is not
// shown, and the one repeated header it gave, Content-Length, is not made
// up; the others come from the delivery itself.
func TestTheRepeatedRequestHeadersOfAnEventPastRetentionLeaveOutItsLength(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	ep := newEndpoint(t, co, testkit.Keyring(t))
	now := time.Now().UTC()
	logged := co.LogDelivery(t, ep.ID, "client.created", streams.StatusSucceeded, now)
	sent := sentHeaders(t, logged.EventID, logged.Body, now)
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&streams.Attempt{ID: ids.New("wha"), CompanyID: co.Company.ID, DeliveryID: logged.DeliveryID,
			EndpointID: ep.ID, StartedAt: now, CreatedAt: now,
			RequestHeaders: webhooks.HeadersToKeep(sent, logged.EventID, len(logged.Body))}).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewDelete().Model((*streams.OutboxEvent)(nil)).Where("id = ?", logged.EventID).Exec(ctx)
		return err
	})
	var as []webhooks.AttemptRow
	co.Tx(t, func(ctx context.Context, tx bun.Tx) (err error) {
		as, err = webhooks.Attempts(ctx, tx, logged.DeliveryID)
		return err
	})
	want := http.Header(maps.Clone(sent))
	want.Del("Content-Length")
	if len(as) != 1 || as[0].RequestBody != nil || !equalHeaders(as[0].RequestHeaders, want) {
		t.Fatalf("read %+v, want no body and headers %v", as, want)
	}
}

func equalHeaders(a, b map[string][]string) bool {
	return (a == nil) == (b == nil) && maps.EqualFunc(a, b, slices.Equal[[]string])
}
