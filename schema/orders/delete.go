package orders

import (
	"context"
	"fmt"

	"oficina/schema/finance"
	"oficina/schema/quotes"
	"oficina/streams"
)

// Delete removes an order (dashboard action) as one write of w and records
// service_order.deleted with the order as it was. What pointed at it stays
// and only loses the link, with no event of its own (spec 6.3 rule 7): its
// appointment (the foreign key clears service_order_id), its revenue entry
// (service_order_id cleared) and the quote it came from, which may be
// converted into an order again. The month's order quota is not given
// back, and messages already queued to technicians stay.
func Delete(ctx context.Context, w *streams.Write, id string) (*Row, error) {
	o, err := get(ctx, w.Tx, id, true)
	if err != nil {
		return nil, err
	}
	if _, err := w.Tx.NewUpdate().Model((*quotes.Row)(nil)).Set("converted_order_id = NULL").
		Where("converted_order_id = ?", o.ID).Exec(ctx); err != nil {
		return nil, fmt.Errorf("orders: unlink quote: %w", err)
	}
	if _, err := w.Tx.NewUpdate().Model((*finance.TransactionRow)(nil)).Set("service_order_id = NULL").
		Where("service_order_id = ?", o.ID).Exec(ctx); err != nil {
		return nil, fmt.Errorf("orders: unlink revenue: %w", err)
	}
	if _, err := w.Tx.NewDelete().Model(o).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("orders: delete: %w", err)
	}
	if _, err := streams.Record(ctx, w, streams.Change{Type: EventDeleted, Object: o.View()}); err != nil {
		return nil, err
	}
	return o, nil
}
