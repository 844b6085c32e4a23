package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
)

// runTrigger is `oficina trigger <event type>`: it makes the event happen
// through the public API, as an integration would — a lead for
// client.created, a sale and its payment for sale.paid — and prints what
// it created. With `oficina listen` running, the event arrives at the
// local URL.
func runTrigger(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("trigger", flag.ContinueOnError)
	fs.SetOutput(stderr)
	api := apiFlags(fs)
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
	t := &triggering{c: c, out: stdout, stamp: time.Now().UTC().Format("150405.000")}
	if err := steps(ctx, t); err != nil {
		return fmt.Errorf("trigger %s: %w", typ, err)
	}
	fmt.Fprintf(stdout, "trigger: %s done\n", typ)
	return nil
}

// triggering is one run of trigger: the API and what it printed.
type triggering struct {
	c     *apiClient
	out   io.Writer
	stamp string // makes names and phones of this run its own
}

// do sends one request and prints what it made.
func (t *triggering) do(ctx context.Context, method, path string, body any) (map[string]any, error) {
	var out map[string]any
	if err := t.c.call(ctx, method, path, body, &out); err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	id, _ := out["id"].(string)
	if lead, ok := out["lead"].(map[string]any); ok {
		id, _ = lead["id"].(string)
	}
	fmt.Fprintf(t.out, "trigger: %s %s → %s\n", method, path, id)
	return out, nil
}

func (t *triggering) id(ctx context.Context, method, path string, body any) (string, error) {
	out, err := t.do(ctx, method, path, body)
	if err != nil {
		return "", err
	}
	id, _ := out["id"].(string)
	return id, nil
}

// The records each step makes.

func (t *triggering) lead(ctx context.Context) error {
	digits := strings.ReplaceAll(t.stamp, ".", "")
	_, err := t.do(ctx, http.MethodPost, "/leads", map[string]any{"name": "Trigger " + t.stamp,
		"phone": "+55 11 9" + digits[len(digits)-8:], "source": "oficina trigger"})
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
	return t.id(ctx, http.MethodPost, "/sales", body)
}

func (t *triggering) paidSale(ctx context.Context) (string, string, error) {
	id, err := t.sale(ctx, nil)
	if err != nil {
		return "", "", err
	}
	out, err := t.do(ctx, http.MethodPost, "/sales/"+id+"/payments", map[string]any{"amount_cents": 10000,
		"paid_at": time.Now().Format(time.DateOnly), "payment_method": "pix"})
	if err != nil {
		return "", "", err
	}
	var payment string
	if ps, _ := out["payments"].([]any); len(ps) > 0 {
		payment, _ = ps[len(ps)-1].(map[string]any)["id"].(string)
	}
	return id, payment, nil
}

func (t *triggering) order(ctx context.Context) (string, error) {
	return t.id(ctx, http.MethodPost, "/service_orders", map[string]any{"client_name": "Trigger " + t.stamp,
		"items": []map[string]any{{"description": "Visita técnica", "quantity": 1, "unit_price_cents": 15000, "total_cents": 15000}}})
}

// triggers are the event types trigger can make, and how.
var triggers = map[string]func(ctx context.Context, t *triggering) error{
	"client.created": func(ctx context.Context, t *triggering) error { return t.lead(ctx) },
	"task.created":   func(ctx context.Context, t *triggering) error { return t.lead(ctx) },
	"sale.created": func(ctx context.Context, t *triggering) error {
		_, err := t.sale(ctx, nil)
		return err
	},
	"sale.updated": func(ctx context.Context, t *triggering) error {
		id, err := t.sale(ctx, nil)
		if err == nil {
			_, err = t.do(ctx, http.MethodPatch, "/sales/"+id, map[string]any{"notes": "Changed by oficina trigger"})
		}
		return err
	},
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
		if err == nil {
			_, err = t.do(ctx, http.MethodPost, "/sales/"+id+"/payments/"+payment+"/cancel", map[string]any{"reason": "oficina trigger"})
		}
		return err
	},
	"sale.canceled": func(ctx context.Context, t *triggering) error {
		id, err := t.sale(ctx, nil)
		if err == nil {
			_, err = t.do(ctx, http.MethodPost, "/sales/"+id+"/cancel", map[string]any{"reason": "oficina trigger"})
		}
		return err
	},
	"financial_transaction.created": func(ctx context.Context, t *triggering) error {
		_, err := t.sale(ctx, map[string]any{"track_in_finance": true})
		return err
	},
	"service_order.created": func(ctx context.Context, t *triggering) error {
		_, err := t.order(ctx)
		return err
	},
	"service_order.updated": func(ctx context.Context, t *triggering) error {
		id, err := t.order(ctx)
		if err == nil {
			_, err = t.do(ctx, http.MethodPatch, "/service_orders/"+id, map[string]any{"internal_notes": "Changed by oficina trigger"})
		}
		return err
	},
	"service_order.status_changed": func(ctx context.Context, t *triggering) error {
		id, err := t.order(ctx)
		if err == nil {
			_, err = t.do(ctx, http.MethodPost, "/service_orders/"+id+"/start", map[string]any{})
		}
		return err
	},
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
