package orders

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/apitime"
	"oficina/schema/db"
	"oficina/schema/field"
	"oficina/schema/ids"
	"oficina/streams"
)

// MaxChecklistItems bounds the items of one checklist.
const MaxChecklistItems = 100

// ChecklistTemplateItem is an item of a company checklist.
type ChecklistTemplateItem struct {
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

// Checklist is a company's automatic checklist: while active it is applied
// to every new order, or only to orders of its type when type_id is set.
type Checklist struct {
	bun.BaseModel `bun:"table:service_order_checklists"`

	ID        string                  `bun:"id,pk" json:"id"`
	CompanyID string                  `bun:"company_id" json:"-"`
	Name      string                  `bun:"name" json:"name"`
	Active    bool                    `bun:"active" json:"active"`
	TypeID    *string                 `bun:"type_id" json:"type_id"`
	Items     []ChecklistTemplateItem `bun:"items,type:jsonb" json:"items"`
	CreatedAt time.Time               `bun:"created_at" json:"-"`
	UpdatedAt time.Time               `bun:"updated_at" json:"-"`
}

// ChecklistView is a checklist as the admin API shows it.
type ChecklistView struct {
	Object    string                  `json:"object" const:"service_order_checklist"`
	ID        string                  `json:"id"`
	Name      string                  `json:"name"`
	Active    bool                    `json:"active"`
	TypeID    *string                 `json:"type_id"`
	Items     []ChecklistTemplateItem `json:"items"`
	CreatedAt apitime.Time            `json:"created_at"`
	UpdatedAt apitime.Time            `json:"updated_at"`
}

// View renders the checklist.
func (c *Checklist) View() ChecklistView {
	return ChecklistView{Object: "service_order_checklist", ID: c.ID, Name: c.Name, Active: c.Active, TypeID: c.TypeID,
		Items: nonNil(c.Items), CreatedAt: apitime.At(c.CreatedAt), UpdatedAt: apitime.At(c.UpdatedAt)}
}

// ChecklistInput creates or changes a checklist; omitted fields keep their
// value (type_id: null applies it to every type).
type ChecklistInput struct {
	Name   *string                  `json:"name"`
	Active *bool                    `json:"active"`
	TypeID field.Opt[string]        `json:"type_id" api:"nullable"`
	Items  *[]ChecklistTemplateItem `json:"items"`
}

func (in ChecklistInput) apply(ctx context.Context, tx bun.IDB, c *Checklist) error {
	var f apierr.Fields
	if in.Name != nil {
		c.Name = strings.TrimSpace(*in.Name)
	}
	if c.Name == "" || utf8.RuneCountInString(c.Name) > MaxNameLen || strings.ContainsRune(c.Name, 0) {
		f.Add("name", apierr.InvalidValue)
	}
	if in.Active != nil {
		c.Active = *in.Active
	}
	if in.Items != nil {
		if len(*in.Items) > MaxChecklistItems {
			f.Add("items", apierr.OutOfRange)
		}
		c.Items = make([]ChecklistTemplateItem, 0, len(*in.Items))
		for i, it := range *in.Items {
			d := strings.TrimSpace(it.Description)
			if d == "" || utf8.RuneCountInString(d) > MaxItemDescLen || strings.ContainsRune(d, 0) {
				f.Add(fmt.Sprintf("items[%d].description", i), apierr.InvalidValue)
			}
			c.Items = append(c.Items, ChecklistTemplateItem{Description: d, Required: it.Required})
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	if in.TypeID.Set {
		c.TypeID = in.TypeID.Ptr()
		if c.TypeID != nil {
			if _, err := getType(ctx, tx, *c.TypeID); err != nil {
				return err
			}
		}
	}
	return nil
}

// CreateChecklist adds an automatic checklist (dashboard action).
func CreateChecklist(ctx context.Context, tx bun.IDB, companyID string, in ChecklistInput, now time.Time) (*Checklist, error) {
	c := &Checklist{ID: ids.New("chk"), CompanyID: companyID, Active: true, Items: []ChecklistTemplateItem{},
		CreatedAt: now, UpdatedAt: now}
	if err := in.apply(ctx, tx, c); err != nil {
		return nil, err
	}
	if _, err := tx.NewInsert().Model(c).Exec(ctx); err != nil {
		return nil, fmt.Errorf("orders: create checklist: %w", err)
	}
	return c, nil
}

// UpdateChecklist changes a checklist; orders keep the items they got.
func UpdateChecklist(ctx context.Context, tx bun.IDB, id string, in ChecklistInput, now time.Time) (*Checklist, error) {
	c, err := db.ByID[Checklist](ctx, tx, "chk", id, true)
	if err != nil {
		return nil, err
	}
	if err := in.apply(ctx, tx, c); err != nil {
		return nil, err
	}
	c.UpdatedAt = now
	if _, err := tx.NewUpdate().Model(c).WherePK().Exec(ctx); err != nil {
		return nil, fmt.Errorf("orders: update checklist: %w", err)
	}
	return c, nil
}

// ListChecklists lists the company's checklists, oldest first.
func ListChecklists(ctx context.Context, tx bun.IDB) ([]ChecklistView, error) {
	var cs []Checklist
	if err := tx.NewSelect().Model(&cs).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("orders: list checklists: %w", err)
	}
	out := make([]ChecklistView, len(cs))
	for i := range cs {
		out[i] = cs[i].View()
	}
	return out, nil
}

// checklistItems copies the items of the automatic checklists read with
// the creation context (oldest checklist first) onto a new order.
func (c *companyContext) checklistItems() []ServiceOrderChecklistItem {
	out := []ServiceOrderChecklistItem{}
	for _, k := range c.Checklists {
		for _, it := range k.Items {
			out = append(out, ServiceOrderChecklistItem{ID: ids.New("chi"), ChecklistID: k.ID, Description: it.Description, Required: it.Required})
		}
	}
	return out
}

// TickChecklistItem marks an item of an order's checklist done or open
// (dashboard action); a completed or canceled order refuses (409).
func TickChecklistItem(ctx context.Context, w *streams.Write, orderID, itemID string, done bool) (*Row, error) {
	return mutate(ctx, w, orderID, func(o *Row) error {
		if o.Closed() {
			return apierr.New(apierr.Conflict)
		}
		for i := range o.Checklist {
			it := &o.Checklist[i]
			if it.ID != itemID {
				continue
			}
			if it.Done == done {
				return nil
			}
			it.Done, it.DoneAt = done, nil
			if done {
				t := apitime.At(w.At)
				it.DoneAt = &t
			}
			return nil
		}
		return apierr.New(apierr.ResourceNotFound)
	})
}

// openRequired reports whether a required checklist item is still open.
func (o *Row) openRequired() bool {
	for _, it := range o.Checklist {
		if it.Required && !it.Done {
			return true
		}
	}
	return false
}
