package main

import (
	"context"
	"io"

	"oficina/http/public"
)

// runOpenAPI prints the document generated from the routes; it needs no
// database (make openapi writes it to docs/openapi.json).
func runOpenAPI(_ context.Context, _ []string, stdout, _ io.Writer) error {
	s, err := public.New(public.Deps{})
	if err != nil {
		return err
	}
	_, err = stdout.Write(append(s.OpenAPI(), '\n'))
	return err
}
