package testkit

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"oficina/schema/mail"
)

// AnyURL accepts every webhook URL: for tests about events, not
// destinations (webhooks.URLChecker).
type AnyURL struct{}

// CheckURL accepts u.
func (AnyURL) CheckURL(context.Context, string) error { return nil }

// Mails are the company's outbox messages of a kind, newest first.
func (c *Company) Mails(t testing.TB, kind string) []mail.Message {
	t.Helper()
	var out []mail.Message
	c.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		ms, err := mail.List(ctx, tx, 1000)
		for _, m := range ms {
			if m.Kind == kind {
				out = append(out, m)
			}
		}
		return err
	})
	return out
}
