// Command gen writes docs/nats/oficina.conf from ops/natsauth
// (go generate ./ops/natsauth).
package main

import (
	"fmt"
	"os"

	"oficina/ops/natsauth"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen <path of oficina.conf>")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(natsauth.Render(nil)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
