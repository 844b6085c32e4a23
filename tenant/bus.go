package tenant

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// ChangedSubject carries company ids whose keys, members, plan or settings
// changed, so every API process drops its cached principals at once.
const ChangedSubject = "oficina.internal.tenant.changed"

// Bus spreads invalidations across processes over core NATS.
type Bus struct {
	auth *Authenticator
	nc   *nats.Conn
	sub  *nats.Subscription
}

// NewBus subscribes auth to invalidations; nc may be nil (single process).
func NewBus(auth *Authenticator, nc *nats.Conn) (*Bus, error) {
	b := &Bus{auth: auth, nc: nc}
	if nc == nil {
		return b, nil
	}
	sub, err := nc.Subscribe(ChangedSubject, func(m *nats.Msg) { auth.Invalidate(string(m.Data)) })
	if err != nil {
		return nil, fmt.Errorf("tenant: subscribe %s: %w", ChangedSubject, err)
	}
	b.sub = sub
	// Make sure the server registered the interest before we serve.
	if err := nc.Flush(); err != nil {
		return nil, fmt.Errorf("tenant: flush: %w", err)
	}
	return b, nil
}

// Changed invalidates companyID here and in every process; it returns once
// the server has the message, so a caller that answers afterwards knows the
// change applies to the very next request anywhere. While NATS is
// disconnected it sends nothing: elsewhere the change applies once cached
// principals expire (AuthCacheTTL, 5 s by default).
func (b *Bus) Changed(ctx context.Context, companyID string) error {
	b.auth.Invalidate(companyID)
	if b.nc == nil {
		return nil
	}
	if !b.nc.IsConnected() {
		// NATS unreachable: a write does not wait on it. The other
		// processes drop their cached principals within AuthCacheTTL.
		return nil
	}
	if err := b.nc.Publish(ChangedSubject, []byte(companyID)); err != nil {
		return fmt.Errorf("tenant: publish change: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	if err := b.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("tenant: flush change: %w", err)
	}
	return nil
}

// Close stops listening.
func (b *Bus) Close() {
	if b.sub != nil {
		_ = b.sub.Unsubscribe()
	}
}
