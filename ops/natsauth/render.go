package natsauth

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

//go:generate go run ./internal/gen ../../docs/nats/oficina.conf

// NKeyVar is the configuration variable holding role's public NKey:
// OFICINA_NKEY_API, OFICINA_NKEY_CONSUMER_CO_EXAMPLE, …
func NKeyVar(role string) string { return "OFICINA_NKEY_" + strings.ToUpper(role) }

// Account is the account every Oficina user belongs to.
const Account = "OFICINA"

const header = `# Oficina: nats-server configuration, one NKey user per process, each with the
# least permissions it needs (docs/security.md, "NATS"). Generated from
# ops/natsauth (go generate ./ops/natsauth); a test fails when this file and the
# source differ, so change the source, not this file.
#
# Needs nats-server 2.12 or newer (message schedules on DELIVERIES).
#
# Identities: the server holds public NKeys only. For each user make a seed
# (nk -gen user > api.nk; nk -inkey api.nk -pubout), give the seed file to the
# process (OFICINA_NATS_NKEY=/path/api.nk) and the public key to the server in
# the environment variable the user names ($OFICINA_NKEY_API, ...).
#
# Replies: each user reads replies on its own inbox prefix only (_INBOX.<user>,
# the default of each oficina subcommand), so no user can read another's
# fetched messages or API answers. Other clients set theirs (nats --inbox-prefix).
`

const server = `
port: 4222

jetstream {
  store_dir: "/var/lib/nats/jetstream"
}

# TLS for clients (OFICINA_NATS_CA, and OFICINA_NATS_CERT/KEY with verify):
# tls {
#   cert_file: "/etc/nats/server.pem"
#   key_file:  "/etc/nats/server-key.pem"
#   ca_file:   "/etc/nats/ca.pem"
#   verify:    true
# }
`

// Render is the configuration text. keys maps role names to public NKeys
// and becomes variable definitions at the top (tests, dev); nil leaves
// every key to the server's environment (the document).
func Render(keys map[string]string) string {
	var b strings.Builder
	b.WriteString(header)
	if len(keys) > 0 {
		b.WriteString("\n")
		for _, role := range slices.Sorted(maps.Keys(keys)) {
			fmt.Fprintf(&b, "%s: %q\n", NKeyVar(role), keys[role])
		}
	}
	b.WriteString(server)
	fmt.Fprintf(&b, "\naccounts {\n  %s {\n    jetstream: enabled\n    users: [\n", Account)
	for i, r := range Roles() {
		if i > 0 {
			b.WriteString("\n")
		}
		writeUser(&b, r)
	}
	b.WriteString("    ]\n  }\n}\n")
	return b.String()
}

func writeUser(b *strings.Builder, r Role) {
	const in = "      "
	fmt.Fprintf(b, "%s# %s: %s\n", in, r.Name, r.About)
	fmt.Fprintf(b, "%s{\n%s  nkey: $%s\n%s  permissions: {\n", in, in, NKeyVar(r.Name), in)
	writeRules(b, in+"    ", "publish", r.Pub)
	writeRules(b, in+"    ", "subscribe", r.Sub)
	fmt.Fprintf(b, "%s  }\n%s}\n", in, in)
}

func writeRules(b *strings.Builder, in, kind string, rules []Rule) {
	width := 0
	for _, r := range rules {
		width = max(width, len(fmt.Sprintf("%q", r.Subject)))
	}
	fmt.Fprintf(b, "%s%s: {\n%s  allow: [\n", in, kind, in)
	for _, r := range rules {
		q := fmt.Sprintf("%q", r.Subject)
		fmt.Fprintf(b, "%s    %s%s  # %s\n", in, q, strings.Repeat(" ", width-len(q)), r.Why)
	}
	fmt.Fprintf(b, "%s  ]\n%s}\n", in, in)
}
