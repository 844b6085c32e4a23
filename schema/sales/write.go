package sales

import (
	"cmp"
	"context"
	"slices"

	"oficina/schema/apierr"
	"oficina/schema/products"
	"oficina/streams"
)

// op is one write of an existing sale: the sale as loaded (locked) and the
// copy the write changes.
type op struct {
	ctx    context.Context
	env    Env // its Write is the unit the op writes in
	before *Row
	s      *Row
	// stock is the ledger reason when the write may move stock ("" none).
	stock string
	// events are the write's own sale events (sale.payment_registered,
	// sale.paid, sale.payment_canceled, sale.canceled), recorded after
	// sale.updated with the sale as it ends.
	events []string
}

// beginCancellation checks a cancellation's reason, then locks and loads
// a sale that may still be written: the start of a payment reversal and
// of a sale's cancellation.
func beginCancellation(ctx context.Context, w *streams.Write, saleID string, in Cancellation) (*op, error) {
	var f apierr.Fields
	checkReason(&f, in.Reason)
	if err := f.Err(); err != nil {
		return nil, err
	}
	return beginWritable(ctx, w, saleID)
}

// beginWritable locks and loads a sale that may still be written
// (op.writable): the start of a payment, an update, a new version, a
// payment reversal and a cancellation.
func beginWritable(ctx context.Context, w *streams.Write, saleID string) (*op, error) {
	o, err := begin(ctx, w, saleID)
	if err != nil {
		return nil, err
	}
	if err := o.writable(); err != nil {
		return nil, err
	}
	return o, nil
}

// begin locks and loads the sale for a write.
func begin(ctx context.Context, w *streams.Write, id string) (*op, error) {
	s, err := Load(ctx, w.Tx, id, LoadOptions{ForUpdate: true})
	if err != nil {
		return nil, err
	}
	return &op{ctx: ctx, env: NewEnv(w, s.CompanyTimezone), before: s, s: s.clone()}, nil
}

// writable refuses writes to a canceled sale (3.2).
func (o *op) writable() error {
	if o.s.CanceledAt != nil {
		return apierr.New(apierr.Conflict)
	}
	return nil
}

// commit writes the changes back, keeps finance and stock in step and
// records sale.updated (when the sale's representation changed), the
// write's own sale events, then financial_transaction.* and stock.changed.
func (o *op) commit() (*Row, error) {
	now := o.env.Write.At
	b := newBatch(o.env.Write.Tx)
	if err := persist(o.env.Write.Tx, b, o.before, o.s, now); err != nil {
		return nil, err
	}
	finEvents, err := syncFinance(o.ctx, o.env.Write.Tx, o.s, false, now, b)
	if err != nil {
		return nil, err
	}
	if err := b.exec(o.ctx, o.env.Write.Tx); err != nil {
		return nil, err
	}
	var moves []products.MovementRow
	if o.stock != "" {
		have, err := products.SaleBalance(o.ctx, o.env.Write.Tx, o.s.ID)
		if err != nil {
			return nil, err
		}
		deltas := stockWanted(o.s)
		for _, d := range have {
			d.Quantity = -d.Quantity
			deltas = append(deltas, d)
		}
		if moves, err = products.Move(o.ctx, o.env.Write.Tx, o.s.CompanyID, deltas, o.stock, &o.s.ID, now); err != nil {
			return nil, err
		}
	}
	o.s.normalize()
	o.before.normalize()
	changes := []streams.Change{{Type: EventUpdated, Object: o.s.View(false), Before: o.before.View(false)}}
	for _, t := range o.events {
		changes = append(changes, streams.Change{Type: t, Object: o.s.View(false)})
	}
	changes = append(changes, finEvents...)
	changes = append(changes, products.MovementChanges(moves)...)
	return o.s, record(o.ctx, o.env.Write, changes)
}

// normalize orders the children as Load reads them, so a sale changed in
// memory renders exactly as GET would.
func (s *Row) normalize() {
	slices.SortStableFunc(s.Items, func(a, b ItemRow) int { return cmp.Compare(a.Position, b.Position) })
	slices.SortFunc(s.Installments, func(a, b InstallmentRow) int {
		return cmp.Or(a.DueDate.Compare(b.DueDate.Time), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(s.Payments, func(a, b PaymentRow) int {
		return cmp.Or(a.CreatedAt.Truncate(1000).Compare(b.CreatedAt.Truncate(1000)), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(s.Transactions, func(a, b financeTx) int { return cmp.Compare(a.ID, b.ID) })
}
