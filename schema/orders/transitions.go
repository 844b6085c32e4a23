package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/finance"
	"oficina/streams"
)

// ServiceOrderStatusChange is the body of POST /service_orders/{id}/status.
type ServiceOrderStatusChange struct {
	Status *ServiceOrderStatus `json:"status" api:"required"`
}

// ServiceOrderComplete is the body of POST /service_orders/{id}/complete.
type ServiceOrderComplete struct {
	// LinkFinancialTransaction posts the order's total to finance as
	// revenue; the caller checks finance:create before.
	LinkFinancialTransaction bool `json:"link_financial_transaction"`
}

// setStatus moves o to status and keeps the timestamps true: entering
// in_progress sets started_at once, entering completed or canceled sets
// completed_at or canceled_at, leaving them clears it (a reopened order is
// neither completed nor canceled).
func (o *Row) setStatus(status string, now time.Time) {
	if o.Status == status {
		return
	}
	o.Status = status
	switch status {
	case StatusInProgress:
		if o.StartedAt == nil {
			o.StartedAt = &now
		}
	case StatusCompleted:
		o.CompletedAt = &now
	case StatusCanceled:
		o.CanceledAt = &now
	}
	if status != StatusCompleted {
		o.CompletedAt = nil
	}
	if status != StatusCanceled {
		o.CanceledAt = nil
	}
}

func validStatus(s *string) error {
	if s == nil {
		return apierr.Invalid("status", apierr.Required)
	}
	if !slices.Contains(Statuses, *s) {
		return apierr.Invalid("status", apierr.InvalidValue)
	}
	return nil
}

// SetStatus is POST /status: any status to any other, the only way to
// reopen a completed or canceled order. The same status changes nothing.
func SetStatus(ctx context.Context, w *streams.Write, id string, in ServiceOrderStatusChange) (*Row, error) {
	if err := validStatus((*string)(in.Status)); err != nil {
		return nil, err
	}
	return mutate(ctx, w, id, func(o *Row) error {
		o.setStatus(string(*in.Status), w.At)
		return nil
	})
}

// Start is POST /start: an open order goes to in_progress with started_at
// set (kept when it already started); completed or canceled is 409.
func Start(ctx context.Context, w *streams.Write, id string) (*Row, error) {
	return mutate(ctx, w, id, func(o *Row) error {
		if o.Closed() {
			return apierr.New(apierr.Conflict)
		}
		o.setStatus(StatusInProgress, w.At)
		return nil
	})
}

// Cancel is POST /cancel: an open order becomes canceled; completed or
// canceled is 409.
func Cancel(ctx context.Context, w *streams.Write, id string) (*Row, error) {
	return mutate(ctx, w, id, func(o *Row) error {
		if o.Closed() {
			return apierr.New(apierr.Conflict)
		}
		o.setStatus(StatusCanceled, w.At)
		return nil
	})
}

// Complete is POST /complete: an open order becomes completed when every
// required checklist item is done and the technicians' completion order of
// the company is respected (409 otherwise, and when already completed or
// canceled). With LinkFinancialTransaction the total is posted to finance.
func Complete(ctx context.Context, w *streams.Write, id string, in ServiceOrderComplete) (*Row, error) {
	c, err := loadContext(ctx, w.Tx, w.CompanyID)
	if err != nil {
		return nil, err
	}
	o, err := mutate(ctx, w, id, func(o *Row) error {
		if o.Closed() || o.openRequired() || !o.completionRespected(c.TechnicianCompletionOrder) {
			return apierr.New(apierr.Conflict)
		}
		o.setStatus(StatusCompleted, w.At)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if in.LinkFinancialTransaction {
		if err := postRevenue(ctx, w, o, c.Timezone); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// postRevenue posts the order's total as an open income entry dated today
// (company time zone) on the default account. An order that already has a
// live revenue entry (completed, reopened and completed again) is not
// posted twice; a zero total posts nothing.
func postRevenue(ctx context.Context, w *streams.Write, o *Row, tz string) error {
	if o.TotalCents == 0 {
		return nil
	}
	var existing string
	err := w.Tx.NewSelect().Model((*finance.TransactionRow)(nil)).Column("id").Where("service_order_id = ?", o.ID).
		Where("status <> 'canceled'").Limit(1).Scan(ctx, &existing)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("orders: revenue lookup: %w", err)
	}
	account, err := finance.ResolveAccount(ctx, w.Tx, nil)
	if err != nil {
		return err
	}
	today := today(tz, w.At)
	t := &finance.TransactionRow{AccountID: account, Kind: "income", Status: "open",
		Description: fmt.Sprintf("OS #%d - %s", o.Number, o.ClientName), AmountCents: o.TotalCents,
		TransactionDate: today, DueDate: &today, ServiceOrderID: &o.ID}
	if err := finance.Post(ctx, w.Tx, w.CompanyID, t, w.At); err != nil {
		return err
	}
	_, err = streams.Record(ctx, w, streams.Change{Type: finance.EventTransactionCreated, Object: t.View()})
	return err
}

func today(tz string, now time.Time) apitime.Date {
	d, _ := apitime.ParseDate(now.In(location(tz)).Format(apitime.DateLayout))
	return d
}
