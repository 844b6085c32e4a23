package apiclient_test

import (
	"context"
	"testing"

	"oficina/http/apiclient"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/tenant"
)

// Issue 26 item 5: a program written against the generated client runs
// against a live server — typed bodies in, typed answers out — and reads
// back what it made through the events API.
func TestTheGeneratedClientWorksAgainstALiveServer(t *testing.T) {
	t.Parallel()
	api := httpkit.NewAPI(t, httpkit.APIOptions{})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	key := co.OwnerKey(t, "leads:create", "tasks:create", "clients:read", "tasks:read", "events:read")
	ctx := context.Background()
	c, err := apiclient.NewClientWithResponses(api.URL, apiclient.WithRequestEditorFn(apiclient.BearerKey(key)))
	if err != nil {
		t.Fatal(err)
	}
	me, err := c.GetMeWithResponse(ctx)
	if err != nil || me.JSON200 == nil || me.JSON200.Organization.Id != co.Company.ID {
		t.Fatalf("GET /me: %v %d %s", err, me.StatusCode(), me.Body)
	}
	lead, err := c.CaptureLeadWithResponse(ctx, &apiclient.CaptureLeadParams{IdempotencyKey: new("live-1")},
		apiclient.LeadCaptureCreate{Name: "Maria Souza", Phone: new("+55 11 91234-5678"), Source: new("site")})
	if err != nil || lead.JSON201 == nil {
		t.Fatalf("POST /leads: %v %d %s", err, lead.StatusCode(), lead.Body)
	}
	evs, err := c.ListEventsWithResponse(ctx, &apiclient.ListEventsParams{Type: &[]string{"client.created"}})
	if err != nil || evs.JSON200 == nil || len(evs.JSON200.Data) != 1 || evs.JSON200.Data[0].Type != "client.created" {
		t.Fatalf("GET /events: %v %d %s", err, evs.StatusCode(), evs.Body)
	}
	one, err := c.GetEventWithResponse(ctx, evs.JSON200.Data[0].Id)
	if err != nil || one.JSON200 == nil || one.JSON200.Id != evs.JSON200.Data[0].Id {
		t.Fatalf("GET /events/{id}: %v %d %s", err, one.StatusCode(), one.Body)
	}
	// An error answer arrives typed too.
	bad, err := c.GetEventWithResponse(ctx, "evt_00000000000000000000000000000000")
	if err != nil || bad.JSON404 == nil || bad.JSON404.Error.Code != "resource_not_found" {
		t.Fatalf("unknown event: %v %d %s", err, bad.StatusCode(), bad.Body)
	}
}
