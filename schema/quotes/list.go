package quotes

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"oficina/schema/page"
	"oficina/streams"
)

// expires are the statuses a quote leaves when valid_until passes: the
// open ones. Approved, rejected and canceled quotes keep their status.
var expires = []string{StatusDraft, StatusSent}

// List opens the quote list as one write of w, newest first. Opening it
// first expires the company's open quotes whose valid_until has passed —
// each records quote.status_changed and quote.updated (spec 6.3 rule 7:
// expiration is sent when the list is opened). The rows are locked, so
// two lists opened at once expire a quote once; the next list finds it
// expired and sends nothing.
func List(ctx context.Context, w *streams.Write, p page.Params) (page.List[Quote], error) {
	if err := expire(ctx, w); err != nil {
		return page.List[Quote]{}, err
	}
	var rows []Row
	if err := p.Apply(w.Tx.NewSelect().Model(&rows), "id").Scan(ctx); err != nil {
		return page.List[Quote]{}, fmt.Errorf("quotes: list: %w", err)
	}
	out := make([]Quote, len(rows))
	for i := range rows {
		out[i] = rows[i].View()
	}
	return page.Wrap(p, out), nil
}

// expire moves the open quotes past valid_until to expired, with one
// update and one record of events for all of them.
func expire(ctx context.Context, w *streams.Write) error {
	var due []Row
	err := w.Tx.NewSelect().Model(&due).Where("status IN (?)", bun.List(expires)).Where("valid_until < ?", w.At).
		OrderExpr("id").For("UPDATE").Scan(ctx)
	if err != nil {
		return fmt.Errorf("quotes: expire: %w", err)
	}
	if len(due) == 0 {
		return nil
	}
	ids := make([]string, len(due))
	changes := make([]streams.Change, 0, 2*len(due))
	for i := range due {
		q := &due[i]
		before, err := streams.Snap(q.View())
		if err != nil {
			return err
		}
		q.setStatus(StatusExpired, w)
		q.UpdatedAt = w.At
		after := q.View()
		fields, err := before.Changed(after)
		if err != nil {
			return err
		}
		ids[i] = q.ID
		changes = append(changes, streams.Change{Type: EventStatusChanged, Object: after},
			streams.Change{Type: EventUpdated, Object: after, ChangedFields: fields})
	}
	if _, err := w.Tx.NewUpdate().Model((*Row)(nil)).Set("status = ?", StatusExpired).Set("updated_at = ?", w.At).
		Where("id IN (?)", bun.List(ids)).Exec(ctx); err != nil {
		return fmt.Errorf("quotes: expire: %w", err)
	}
	_, err = streams.Record(ctx, w, changes...)
	return err
}
