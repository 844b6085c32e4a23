// Command gen writes codes_gen.go and docs/errors.md from catalogue.json.
// It runs through `go generate ./schema/apierr` (working directory: the
// package directory).
package main

import (
	"fmt"
	"os"

	"oficina/schema/apierr"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	data, err := os.ReadFile("catalogue.json")
	if err != nil {
		return err
	}
	c, err := apierr.Parse(data)
	if err != nil {
		return err
	}
	src, err := c.GoConstants()
	if err != nil {
		return err
	}
	if err := os.WriteFile("codes_gen.go", src, 0o644); err != nil {
		return err
	}
	return os.WriteFile("../../docs/errors.md", c.Markdown(), 0o644)
}
