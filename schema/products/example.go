package products

import (
	"oficina/schema/apitime"
	"oficina/schema/ids"
)

// exampleProduct, exampleService and exampleMovement are the catalogue's
// objects as their events show them in the OpenAPI document's webhook
// examples.
func exampleProduct() Product {
	return Product{Object: "product", ID: ids.Example("prd", 1), Name: "Condenser wall bracket", SKU: new("SUP-400"),
		PriceCents: 12000, StockQuantity: 37, Active: true, Variations: []ProductVariation{},
		CreatedAt: apitime.TimeOf(2025, 11, 4, 14, 12, 0), UpdatedAt: apitime.TimeOf(2026, 3, 14, 13, 5, 9)}
}

func exampleService() Service {
	return Service{Object: "service", ID: ids.Example("svc", 1), Name: "Air conditioner installation",
		BasePriceCents: 45000, Active: true,
		CreatedAt: apitime.TimeOf(2025, 11, 4, 14, 15, 30), UpdatedAt: apitime.TimeOf(2026, 1, 20, 9, 41, 7)}
}

func exampleMovement() StockMovement {
	return StockMovement{Object: "stock_movement", ID: ids.Example("stk", 1), ProductID: ids.Example("prd", 1),
		Quantity: -1, BalanceAfter: 37, Reason: ReasonSale, SaleID: new(ids.Example("sale", 1)),
		CreatedAt: apitime.TimeOf(2026, 3, 14, 13, 5, 9)}
}
