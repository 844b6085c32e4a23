package mail

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	outbox "oficina/schema/mail"
	"oficina/schema/service"
	"oficina/tenant"
)

// Sender defaults.
const (
	DefaultInterval    = 5 * time.Second
	DefaultMaxAttempts = 8
)

// Sender delivers the outbox. It is cross-company: it asks the database
// which companies have mail due, then sends each company's messages inside
// that company's transaction with FOR UPDATE SKIP LOCKED, so several senders
// may run. A failed send is retried with exponential backoff (1 min, 2, 4,
// …) and given up after MaxAttempts (failed_at set).
type Sender struct {
	// Base: the logger, and the business clock that says what mail is due.
	service.Base
	DB          *bun.DB
	Transport   Transport
	Interval    time.Duration // 0: DefaultInterval
	MaxAttempts int           // 0: DefaultMaxAttempts
	// Only, when set, is the list of companies to serve instead of asking
	// the database (tests sharing a database).
	Only []string
}

// Run sends due mail every Interval until ctx ends.
func (s *Sender) Run(ctx context.Context) error {
	every := s.Interval
	if every <= 0 {
		every = DefaultInterval
	}
	return s.Every(ctx, every, "mail sender", s.RunOnce)
}

// RunOnce sends the mail due now and returns how many were sent.
func (s *Sender) RunOnce(ctx context.Context) (int, error) {
	companies := s.Only
	if len(companies) == 0 {
		var err error
		if companies, err = outbox.DueCompanies(ctx, s.DB, s.BusinessNow(), 1000); err != nil {
			return 0, err
		}
	}
	sent := 0
	var errs []error
	for _, co := range companies {
		err := tenant.Tx(ctx, s.DB, co, func(ctx context.Context, tx bun.Tx) error {
			n, err := s.company(ctx, tx)
			sent += n
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("company %s: %w", co, err))
		}
	}
	return sent, errors.Join(errs...)
}

func (s *Sender) company(ctx context.Context, tx bun.Tx) (int, error) {
	now := s.BusinessNow()
	ms, err := outbox.Due(ctx, tx, now, 50)
	if err != nil {
		return 0, err
	}
	limit := s.MaxAttempts
	if limit <= 0 {
		limit = DefaultMaxAttempts
	}
	sent := 0
	for i := range ms {
		m := &ms[i]
		m.Attempts++
		if err := s.Transport.Send(ctx, m); err != nil {
			msg := err.Error()
			m.LastError = &msg
			m.NextAttemptAt = now.Add(time.Minute << min(m.Attempts-1, 10))
			if m.Attempts >= limit {
				m.FailedAt = &now
			}
			s.Logger().WarnContext(ctx, "mail not sent", "id", m.ID, "attempt", m.Attempts, "error", err)
		} else {
			m.SentAt = &now
			sent++
		}
		if err := outbox.RecordAttempt(ctx, tx, m); err != nil {
			return sent, err
		}
	}
	return sent, nil
}
