// Package notify is the outbox of the messaging channel (WhatsApp or the
// like): a write that must tell a team member something stores a pending
// notification in its own transaction, so the message exists exactly when the
// write committed; a sender drains the pending rows afterwards. Oficina ships
// no sender yet: the rows are the contract (docs/api.md, "Service orders").
package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/ids"
)

// Channel is the only channel so far.
const Channel = "messaging"

// Statuses of a notification.
const (
	StatusPending = "pending"
	StatusSent    = "sent"
	StatusFailed  = "failed"
)

// Notification is one message to one member.
type Notification struct {
	bun.BaseModel `bun:"table:notifications"`

	ID                string          `bun:"id,pk" json:"id"`
	CompanyID         string          `bun:"company_id" json:"-"`
	Channel           string          `bun:"channel" json:"channel"`
	RecipientMemberID string          `bun:"recipient_member_id" json:"recipient_member_id"`
	Template          string          `bun:"template" json:"template"`
	SubjectType       string          `bun:"subject_type" json:"subject_type"`
	SubjectID         string          `bun:"subject_id" json:"subject_id"`
	Payload           json.RawMessage `bun:"payload,type:jsonb" json:"payload"`
	Status            string          `bun:"status" json:"status"`
	CreatedAt         time.Time       `bun:"created_at" json:"created_at"`
	SentAt            *time.Time      `bun:"sent_at" json:"sent_at"`
}

// Message is what a caller asks to send.
type Message struct {
	RecipientMemberID string
	Template          string // e.g. "service_order.assigned"
	SubjectType       string // e.g. "service_order"
	SubjectID         string
	Payload           any // marshalled to JSON for the sender's template
}

// Enqueue stores the messages as pending notifications in tx.
func Enqueue(ctx context.Context, tx bun.IDB, companyID string, now time.Time, msgs ...Message) ([]Notification, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	rows := make([]Notification, len(msgs))
	for i, m := range msgs {
		payload, err := json.Marshal(m.Payload)
		if err != nil {
			return nil, fmt.Errorf("notify: payload: %w", err)
		}
		rows[i] = Notification{ID: ids.New("ntf"), CompanyID: companyID, Channel: Channel,
			RecipientMemberID: m.RecipientMemberID, Template: m.Template, SubjectType: m.SubjectType,
			SubjectID: m.SubjectID, Payload: payload, Status: StatusPending, CreatedAt: now}
	}
	if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return nil, fmt.Errorf("notify: enqueue: %w", err)
	}
	return rows, nil
}

// ForSubject lists the notifications about one record, oldest first.
func ForSubject(ctx context.Context, tx bun.IDB, subjectID string) ([]Notification, error) {
	rows := []Notification{}
	if err := tx.NewSelect().Model(&rows).Where("subject_id = ?", subjectID).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("notify: list: %w", err)
	}
	return rows, nil
}
