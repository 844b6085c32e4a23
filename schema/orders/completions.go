package orders

import (
	"context"
	"slices"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/streams"
)

// TechnicianCompletionInput marks (done) or unmarks a technician's part of
// an order (dashboard action).
type TechnicianCompletionInput struct {
	TechnicianID string `json:"technician_id"`
	Done         *bool  `json:"done"`
}

// MarkTechnicianDone records that a technician on the order finished their
// part (marks keep the order they were made in) or withdraws the mark. A
// completed or canceled order refuses (409); a technician not on the order
// is 422.
func MarkTechnicianDone(ctx context.Context, w *streams.Write, orderID string, in TechnicianCompletionInput) (*Row, error) {
	if in.Done == nil {
		return nil, apierr.Invalid("done", apierr.Required)
	}
	return mutate(ctx, w, orderID, func(o *Row) error {
		if o.Closed() {
			return apierr.New(apierr.Conflict)
		}
		if !slices.Contains(o.technicians(), in.TechnicianID) {
			return apierr.Invalid("technician_id", apierr.InvalidValue)
		}
		i := slices.IndexFunc(o.TechnicianCompletions, func(c TechnicianCompletion) bool { return c.TechnicianID == in.TechnicianID })
		switch {
		case *in.Done && i < 0:
			o.TechnicianCompletions = append(o.TechnicianCompletions, TechnicianCompletion{TechnicianID: in.TechnicianID, CompletedAt: apitime.At(w.At)})
		case !*in.Done && i >= 0:
			o.TechnicianCompletions = slices.Delete(slices.Clone(o.TechnicianCompletions), i, i+1)
		}
		return nil
	})
}

// completionRespected applies the company's technician completion order:
// none needs no marks; any needs a mark from every technician on the order;
// support_first also needs the technician in charge to have marked after
// every support technician.
func (o *Row) completionRespected(mode string) bool {
	if mode == CompletionNone || mode == "" {
		return true
	}
	pos := make(map[string]int, len(o.TechnicianCompletions))
	for i, c := range o.TechnicianCompletions {
		pos[c.TechnicianID] = i
	}
	for _, t := range o.technicians() {
		if _, ok := pos[t]; !ok {
			return false
		}
	}
	if mode == CompletionSupportFirst && o.TechnicianID != nil {
		lead := pos[*o.TechnicianID]
		for _, s := range o.SupportTechnicianIDs {
			if pos[s] > lead {
				return false
			}
		}
	}
	return true
}
