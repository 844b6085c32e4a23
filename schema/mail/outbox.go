package mail

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/ids"
	"oficina/tenant"
)

// Message is a row of mail_outbox.
type Message struct {
	bun.BaseModel `bun:"table:mail_outbox"`

	ID            string     `bun:"id,pk" json:"id"`
	CompanyID     string     `bun:"company_id" json:"company_id"`
	Kind          string     `bun:"kind" json:"kind"`
	To            []string   `bun:"to_addresses,array" json:"to"`
	Subject       string     `bun:"subject" json:"subject"`
	Body          string     `bun:"body" json:"body"`
	Attempts      int        `bun:"attempts" json:"attempts"`
	LastError     *string    `bun:"last_error" json:"last_error"`
	NextAttemptAt time.Time  `bun:"next_attempt_at" json:"next_attempt_at"`
	SentAt        *time.Time `bun:"sent_at" json:"sent_at"`
	FailedAt      *time.Time `bun:"failed_at" json:"failed_at"`
	CreatedAt     time.Time  `bun:"created_at" json:"created_at"`
}

// Managers returns the e-mail addresses of the active owners and admins of
// the transaction's company, sorted.
func Managers(ctx context.Context, tx bun.IDB) ([]string, error) {
	var out []string
	err := tx.NewSelect().Model((*tenant.Member)(nil)).Column("email").
		Where("role IN (?)", bun.List([]tenant.Role{tenant.RoleOwner, tenant.RoleAdmin})).
		Where("status = 'active'").Where("email <> ''").Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("mail: managers: %w", err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Enqueue stores a message in tx (the causing write's transaction). A
// message without recipients is not stored and nil is returned.
func Enqueue(ctx context.Context, tx bun.IDB, companyID, kind string, to []string, subject, body string, now time.Time) (*Message, error) {
	if len(to) == 0 {
		return nil, nil
	}
	m := &Message{ID: ids.New("mail"), CompanyID: companyID, Kind: kind, To: to, Subject: subject,
		Body: body, NextAttemptAt: now, CreatedAt: now}
	if _, err := tx.NewInsert().Model(m).Exec(ctx); err != nil {
		return nil, fmt.Errorf("mail: enqueue %s: %w", kind, err)
	}
	return m, nil
}

// ToManagers enqueues a message to the company's owners and admins.
func ToManagers(ctx context.Context, tx bun.IDB, companyID, kind, subject, body string, now time.Time) (*Message, error) {
	to, err := Managers(ctx, tx)
	if err != nil {
		return nil, err
	}
	return Enqueue(ctx, tx, companyID, kind, to, subject, body, now)
}

// List returns the company's messages, newest first (admin API, tests).
func List(ctx context.Context, tx bun.IDB, limit int) ([]Message, error) {
	var ms []Message
	if err := tx.NewSelect().Model(&ms).Order("id DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("mail: list: %w", err)
	}
	return ms, nil
}

// ExpiredCompanies asks the database which companies hold mail recorded
// before `before` (a cross-company question answered by a narrow definer
// function of the worker role; each company is then purged in its own
// transaction).
func ExpiredCompanies(ctx context.Context, db bun.IDB, before time.Time, limit int) ([]string, error) {
	var out []string
	if err := db.NewRaw("SELECT oficina_expired_companies(?, ?)", before, limit).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("mail: expired companies: %w", err)
	}
	return out, nil
}

// PurgeCompany deletes the transaction's company's messages created before
// `before` (the retention sweep keeps mail as long as events).
func PurgeCompany(ctx context.Context, tx bun.IDB, before time.Time) (int64, error) {
	res, err := tx.NewDelete().Model((*Message)(nil)).Where("created_at < ?", before).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("mail: purge: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// Backlog is how much mail waits to be sent (neither sent nor given up),
// across every company: a definer function answers the count only (the
// worker role's; metrics).
func Backlog(ctx context.Context, db bun.IDB) (int64, error) {
	var n int64
	if err := db.NewRaw("SELECT oficina_mail_backlog()").Scan(ctx, &n); err != nil {
		return 0, fmt.Errorf("mail: backlog: %w", err)
	}
	return n, nil
}

// DueCompanies returns up to limit companies with mail due at now, across
// every company: a definer function answers company ids only (the worker
// role's; the sender).
func DueCompanies(ctx context.Context, db bun.IDB, now time.Time, limit int) ([]string, error) {
	var out []string
	if err := db.NewRaw("SELECT oficina_mail_companies(?, ?)", now, limit).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("mail: companies: %w", err)
	}
	return out, nil
}

// Due locks and returns up to limit of the transaction's company's messages
// due at now, oldest first. SKIP LOCKED lets several senders run.
func Due(ctx context.Context, tx bun.IDB, now time.Time, limit int) ([]Message, error) {
	var ms []Message
	err := tx.NewSelect().Model(&ms).Where("sent_at IS NULL AND failed_at IS NULL").
		Where("next_attempt_at <= ?", now).Order("created_at").Limit(int64(limit)).For("UPDATE SKIP LOCKED").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("mail: due: %w", err)
	}
	return ms, nil
}

// RecordAttempt stores the outcome of a send of m (attempts, last error,
// next attempt, sent or given up).
func RecordAttempt(ctx context.Context, tx bun.IDB, m *Message) error {
	if _, err := tx.NewUpdate().Model(m).Column("attempts", "last_error", "next_attempt_at", "sent_at", "failed_at").
		WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("mail: record send of %s: %w", m.ID, err)
	}
	return nil
}
