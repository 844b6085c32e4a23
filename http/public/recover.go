package public

import (
	"context"
	"net/http"

	"github.com/uptrace/bun"

	"oficina/schema/webhooks"
)

// recoverRoutes: recovering an endpoint's failed deliveries (issue 18).
func (s *Server) recoverRoutes() {
	const base, tg = "/webhook_endpoints/{id}", "webhooks"
	handle(s, http.MethodPost, base+"/recover", need("webhooks:update"), op{id: "recoverWebhookDeliveries", tag: tg,
		summary: "Recover failed deliveries", status: http.StatusAccepted,
		desc: "Resends every delivery of the window that failed and never later succeeded, one per event, each as a new " +
			"delivery of the same event (same event id), through the same caps as any delivery. The answer is a task " +
			"whose progress `GET …/recover_tasks/{task_id}` reads; with `dry_run: true` it only counts (no task, `id` " +
			"null). Bounds: the window is at most 14 days (else 422 `window_too_long` on `since`) and at most 10,000 " +
			"deliveries (else 422 `too_many_deliveries` on `since`). One task runs per endpoint at a time: a second is " +
			"409 `conflict`, and so is a disabled endpoint.",
		example: `{"since": "2026-03-01T00:00:00Z", "until": "2026-03-02T00:00:00Z", "dry_run": true}`},
		s.recoverWebhookDeliveries)
	handle(s, http.MethodGet, base+"/recover_tasks/{task_id}", need("webhooks:read"), op{id: "getWebhookRecoverTask",
		tag: tg, summary: "Read a recovery task", desc: "Its status and progress: `counted`, `sent`, `skipped`."},
		s.getWebhookRecoverTask)
}

func (s *Server) recoverWebhookDeliveries(ctx context.Context, c *Call[webhooks.WebhookRecoverRequest]) (webhooks.WebhookRecoverTask, error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookRecoverTask{}, err
	}
	return webhooks.Recover(ctx, c.W.Tx, c.Path("id"), c.Body, c.W.At)
}

func (s *Server) getWebhookRecoverTask(ctx context.Context, c *Call[any]) (webhooks.WebhookRecoverTask, error) {
	p := c.P
	if err := webhookManager(p); err != nil {
		return webhooks.WebhookRecoverTask{}, err
	}
	var out webhooks.WebhookRecoverTask
	err := s.read(ctx, p, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = webhooks.GetRecoverTask(ctx, tx, c.Path("id"), c.Path("task_id"))
		return err
	})
	return out, err
}
