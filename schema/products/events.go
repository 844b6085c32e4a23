package products

import "oficina/streams"

// Event types of the catalogue: products (data.object: View), services
// (Service) and stock movements (StockMovement). Stock events belong to
// the products permission module.
const (
	EventProductCreated = "product.created"
	EventProductUpdated = "product.updated"
	EventProductDeleted = "product.deleted"
	EventServiceCreated = "service.created"
	EventServiceUpdated = "service.updated"
	EventServiceDeleted = "service.deleted"
	EventStockChanged   = "stock.changed"
)

// EventTypes describes the catalogue's events.
func EventTypes() []streams.EventType {
	return []streams.EventType{
		{Name: EventProductCreated, Kind: "product", Object: exampleProduct(),
			Summary: "A product was created in the dashboard (its initial stock also sends stock.changed)."},
		{Name: EventProductUpdated, Kind: "product", Object: exampleProduct(), ChangedFields: []string{"name", "price_cents"},
			Summary: "A product or its list of variations changed; changed_fields names the fields. Renaming a category sends nothing."},
		{Name: EventProductDeleted, Kind: "product", Object: exampleProduct(),
			Summary: "A product was deleted; the object is the product as it was. Sale items lose product_id and its stock movements are deleted, with no sale.updated or stock.changed."},
		{Name: EventServiceCreated, Kind: "service", Object: exampleService(),
			Summary: "A service was added to the catalogue in the dashboard."},
		{Name: EventServiceUpdated, Kind: "service", Object: exampleService(), ChangedFields: []string{"base_price_cents"},
			Summary: "A service changed; changed_fields names the fields. Renaming a category sends nothing."},
		{Name: EventServiceDeleted, Kind: "service", Object: exampleService(),
			Summary: "A service was deleted in the dashboard; the object is the service as it was."},
		{Name: EventStockChanged, Kind: "stock_movement", Object: exampleMovement(),
			Summary: "A stock movement was recorded: an adjustment, a product's initial stock, a sale deducting stock or a cancellation or new version returning it."},
	}
}
