// Package apiclient is the Go client of the public API, generated from
// docs/openapi.json by oapi-codegen (go generate ./http/apiclient; a test
// fails when it drifts from the document). Every operation is a method of
// ClientWithResponses, every event type of the webhooks section a type
// (SaleCreatedEvent, …). `oficina listen` and `oficina trigger` use it.
//
//	c, err := apiclient.NewClientWithResponses("http://localhost:8080",
//		apiclient.WithRequestEditorFn(apiclient.BearerKey("ofk_…")))
//	me, err := c.GetMeWithResponse(ctx)
//	fmt.Println(me.JSON200.Organization.Name)
package apiclient

//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../../docs/openapi.json
