// Command gen writes the event table of docs/events.md and the names of
// schema/eventnames from the catalogue.
// It runs through `go generate ./schema/events` (working directory: the
// package directory).
package main

import (
	"fmt"
	"os"

	"oficina/schema/events"
)

const doc = "../../docs/events.md"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	data, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	out, err := events.ReplaceDoc(data)
	if err != nil {
		return err
	}
	if err := os.WriteFile(doc, out, 0o644); err != nil {
		return err
	}
	src, err := events.NamesSource()
	if err != nil {
		return err
	}
	return os.WriteFile(events.NamesFile, src, 0o644)
}
