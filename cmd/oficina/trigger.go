package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"oficina/http/apiclient"
)

// runTrigger is `oficina trigger <event type>`: it makes the event happen
// through the public API, as an integration would — a lead for
// client.created, a sale and its payment for sale.paid, an endpoint of its
// own disabled (and enabled again) for webhook_endpoint.disabled (and
// .enabled) — and prints what it created. With `oficina listen` running,
// the event arrives at the local URL. It calls the API through the
// generated client (http/apiclient).
func runTrigger(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("trigger", flag.ContinueOnError)
	fs.SetOutput(stderr)
	api := apiFlags(fs)
	endpointURL := fs.String("endpoint-url", "https://example.com/oficina-trigger",
		"for webhook_endpoint.*: the URL of the endpoint trigger makes, turns and deletes (one the server's destination rules accept; it is subscribed to webhook_endpoint.client_certificate_expiring only, so nothing is sent to it)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: oficina trigger [flags] <event type>\n\nevent types: %s\n\nflags:\n",
			strings.Join(triggerable(), ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("trigger: one event type")
	}
	typ := fs.Arg(0)
	steps, ok := triggers[typ]
	if !ok {
		return fmt.Errorf("trigger: %q cannot be made through the public API; these can: %s", typ, strings.Join(triggerable(), ", "))
	}
	c, err := api.client()
	if err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	t := &triggering{api: c.api, out: stdout, stamp: time.Now().UTC().Format("150405.000"), endpointURL: *endpointURL}
	if err := steps(ctx, t); err != nil {
		return fmt.Errorf("trigger %s: %w", typ, err)
	}
	fmt.Fprintf(stdout, "trigger: %s done\n", typ)
	return nil
}

// triggering is one run of trigger: the API and what it printed.
type triggering struct {
	api         *apiclient.ClientWithResponses
	out         io.Writer
	stamp       string // makes names and phones of this run its own
	endpointURL string // of the endpoint the webhook_endpoint triggers make
}

const jsonType = "application/json"

// made checks a step's answer, prints what it made and returns the body.
func (t *triggering) made(what string, r answer, body []byte, err error) ([]byte, error) {
	if err == nil {
		body, err = checked(r, body, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	fmt.Fprintf(t.out, "trigger: %s → %s\n", what, idOf(body))
	return body, nil
}

// The records each step makes.

func (t *triggering) lead(ctx context.Context) error {
	digits := strings.ReplaceAll(t.stamp, ".", "")
	r, err := t.api.CaptureLeadWithBodyWithResponse(ctx, &apiclient.CaptureLeadParams{IdempotencyKey: newKey()}, jsonType,
		jsonBody(map[string]any{"name": "Trigger " + t.stamp, "phone": "+55 11 9" + digits[len(digits)-8:], "source": "oficina trigger"}))
	if err != nil {
		return err
	}
	_, err = t.made("POST /leads", r, r.Body, nil)
	return err
}

// sale makes a sale of 100.00 in one open installment, due in 30 days.
func (t *triggering) sale(ctx context.Context, extra map[string]any) (string, error) {
	body := map[string]any{
		"items": []map[string]any{{"type": "custom", "name": "Trigger " + t.stamp, "unit_price_cents": 10000}},
		"payment_plan": map[string]any{"mode": "installments", "payment_method": "pix",
			"installments": []map[string]any{{"amount_cents": 10000, "due_date": time.Now().AddDate(0, 0, 30).Format(time.DateOnly)}}},
	}
	for k, v := range extra {
		body[k] = v
	}
	r, err := t.api.CreateSaleWithBodyWithResponse(ctx, &apiclient.CreateSaleParams{IdempotencyKey: newKey()}, jsonType, jsonBody(body))
	if err != nil {
		return "", err
	}
	b, err := t.made("POST /sales", r, r.Body, nil)
	return idOf(b), err
}

// paidSale makes a sale and pays it whole; it returns the sale and the
// payment.
func (t *triggering) paidSale(ctx context.Context) (string, string, error) {
	id, err := t.sale(ctx, nil)
	if err != nil {
		return "", "", err
	}
	r, err := t.api.CreateSalePaymentWithBodyWithResponse(ctx, id, &apiclient.CreateSalePaymentParams{IdempotencyKey: newKey()},
		jsonType, jsonBody(map[string]any{"amount_cents": 10000, "paid_at": time.Now().Format(time.DateOnly), "payment_method": "pix"}))
	if err != nil {
		return "", "", err
	}
	body, err := t.made("POST /sales/"+id+"/payments", r, r.Body, nil)
	if err != nil {
		return "", "", err
	}
	var sale struct {
		Payments []struct {
			ID string `json:"id"`
		} `json:"payments"`
	}
	if err := json.Unmarshal(body, &sale); err != nil || len(sale.Payments) == 0 {
		return "", "", fmt.Errorf("the paid sale %s has no payment", id)
	}
	return id, sale.Payments[len(sale.Payments)-1].ID, nil
}

func (t *triggering) order(ctx context.Context) (string, error) {
	r, err := t.api.CreateServiceOrderWithBodyWithResponse(ctx, &apiclient.CreateServiceOrderParams{IdempotencyKey: newKey()}, jsonType,
		jsonBody(map[string]any{"client_name": "Trigger " + t.stamp, "items": []map[string]any{{"description": "Visita técnica",
			"quantity": 1, "unit_price_cents": 15000, "total_cents": 15000}}}))
	if err != nil {
		return "", err
	}
	b, err := t.made("POST /service_orders", r, r.Body, nil)
	return idOf(b), err
}

// endpointTurns makes an endpoint of its own, disables it and, when
// enable is set, enables it again, then deletes it: the operational events
// about it reach every other subscriber (and listen), and no real
// receiver misses a delivery meanwhile. It needs webhooks:create,
// webhooks:update, webhooks:delete and webhooks:read.
func (t *triggering) endpointTurns(ctx context.Context, enable bool) (err error) {
	r, err := t.api.CreateWebhookEndpointWithBodyWithResponse(ctx, &apiclient.CreateWebhookEndpointParams{IdempotencyKey: newKey()},
		jsonType, jsonBody(map[string]any{"url": t.endpointURL, "description": "oficina trigger " + t.stamp,
			"events": []string{"webhook_endpoint.client_certificate_expiring"}}))
	if err != nil {
		return err
	}
	b, err := t.made("POST /webhook_endpoints", r, r.Body, nil)
	if err != nil {
		return err
	}
	id := idOf(b)
	defer func() {
		r, derr := t.api.DeleteWebhookEndpointWithResponse(ctx, id, &apiclient.DeleteWebhookEndpointParams{IdempotencyKey: newKey()})
		if derr == nil {
			_, derr = t.made("DELETE /webhook_endpoints/"+id, r, r.Body, nil)
		}
		err = errors.Join(err, derr)
	}()
	d, err := t.api.DisableWebhookEndpointWithResponse(ctx, id, &apiclient.DisableWebhookEndpointParams{IdempotencyKey: newKey()})
	if err == nil {
		_, err = t.made("POST /webhook_endpoints/"+id+"/disable", d, d.Body, nil)
	}
	if err != nil || !enable {
		return err
	}
	e, err := t.api.EnableWebhookEndpointWithResponse(ctx, id, &apiclient.EnableWebhookEndpointParams{IdempotencyKey: newKey()})
	if err == nil {
		_, err = t.made("POST /webhook_endpoints/"+id+"/enable", e, e.Body, nil)
	}
	return err
}

// then runs next with the id first made, when first succeeded.
func then(first func(ctx context.Context, t *triggering) (string, error), next func(ctx context.Context, t *triggering, id string) error) func(ctx context.Context, t *triggering) error {
	return func(ctx context.Context, t *triggering) error {
		id, err := first(ctx, t)
		if err != nil {
			return err
		}
		return next(ctx, t, id)
	}
}

func newSale(ctx context.Context, t *triggering) (string, error)  { return t.sale(ctx, nil) }
func newOrder(ctx context.Context, t *triggering) (string, error) { return t.order(ctx) }

// triggers are the event types trigger can make, and how.
var triggers = map[string]func(ctx context.Context, t *triggering) error{
	"webhook_endpoint.disabled": func(ctx context.Context, t *triggering) error { return t.endpointTurns(ctx, false) },
	"webhook_endpoint.enabled":  func(ctx context.Context, t *triggering) error { return t.endpointTurns(ctx, true) },
	"client.created":            func(ctx context.Context, t *triggering) error { return t.lead(ctx) },
	"task.created":              func(ctx context.Context, t *triggering) error { return t.lead(ctx) },
	"sale.created": func(ctx context.Context, t *triggering) error {
		_, err := t.sale(ctx, nil)
		return err
	},
	"sale.updated": then(newSale, func(ctx context.Context, t *triggering, id string) error {
		r, err := t.api.UpdateSaleWithBodyWithResponse(ctx, id, &apiclient.UpdateSaleParams{IdempotencyKey: newKey()}, jsonType,
			jsonBody(map[string]any{"notes": "Changed by oficina trigger"}))
		if err == nil {
			_, err = t.made("PATCH /sales/"+id, r, r.Body, nil)
		}
		return err
	}),
	"sale.payment_registered": func(ctx context.Context, t *triggering) error {
		_, _, err := t.paidSale(ctx)
		return err
	},
	"sale.paid": func(ctx context.Context, t *triggering) error {
		_, _, err := t.paidSale(ctx)
		return err
	},
	"sale.payment_canceled": func(ctx context.Context, t *triggering) error {
		id, payment, err := t.paidSale(ctx)
		if err != nil {
			return err
		}
		r, err := t.api.CancelSalePaymentWithBodyWithResponse(ctx, id, payment, &apiclient.CancelSalePaymentParams{IdempotencyKey: newKey()},
			jsonType, jsonBody(map[string]any{"reason": "oficina trigger"}))
		if err == nil {
			_, err = t.made("POST /sales/"+id+"/payments/"+payment+"/cancel", r, r.Body, nil)
		}
		return err
	},
	"sale.canceled": then(newSale, func(ctx context.Context, t *triggering, id string) error {
		r, err := t.api.CancelSaleWithBodyWithResponse(ctx, id, &apiclient.CancelSaleParams{IdempotencyKey: newKey()}, jsonType,
			jsonBody(map[string]any{"reason": "oficina trigger"}))
		if err == nil {
			_, err = t.made("POST /sales/"+id+"/cancel", r, r.Body, nil)
		}
		return err
	}),
	"financial_transaction.created": func(ctx context.Context, t *triggering) error {
		_, err := t.sale(ctx, map[string]any{"track_in_finance": true})
		return err
	},
	"service_order.created": func(ctx context.Context, t *triggering) error {
		_, err := t.order(ctx)
		return err
	},
	"service_order.updated": then(newOrder, func(ctx context.Context, t *triggering, id string) error {
		r, err := t.api.UpdateServiceOrderWithBodyWithResponse(ctx, id, &apiclient.UpdateServiceOrderParams{IdempotencyKey: newKey()},
			jsonType, jsonBody(map[string]any{"internal_notes": "Changed by oficina trigger"}))
		if err == nil {
			_, err = t.made("PATCH /service_orders/"+id, r, r.Body, nil)
		}
		return err
	}),
	"service_order.status_changed": then(newOrder, func(ctx context.Context, t *triggering, id string) error {
		r, err := t.api.StartServiceOrderWithBodyWithResponse(ctx, id, &apiclient.StartServiceOrderParams{IdempotencyKey: newKey()},
			jsonType, jsonBody(map[string]any{}))
		if err == nil {
			_, err = t.made("POST /service_orders/"+id+"/start", r, r.Body, nil)
		}
		return err
	}),
}

// triggerable lists what trigger can make, sorted.
func triggerable() []string {
	out := make([]string, 0, len(triggers))
	for k := range triggers {
		out = append(out, k)
	}
	sort.Strings(out)
	return slices.Clip(out)
}
