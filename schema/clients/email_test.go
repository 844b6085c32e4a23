package clients_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/ops/testkit"
	"oficina/schema/clients"
	"oficina/schema/db"
)

// Issue 24 item 5 (docs/api.md, "E-mail addresses"): an address holding a
// character that shows nothing or moves the text around it is refused;
// the composed and decomposed spellings of a letter are one address,
// stored composed (NFC); fullwidth and other compatibility forms and case
// match the plain letters (the key is NFKC and lower case).
func TestLookAlikeEmailsAreRefusedOrOneAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, stored, key string }{
		{"Ana.Silva@Example.COM", "Ana.Silva@Example.COM", "ana.silva@example.com"},
		{"  ana@example.com ", "ana@example.com", "ana@example.com"},
		{"jos\u00e9@example.com", "jos\u00e9@example.com", "jos\u00e9@example.com"},
		{"jose\u0301@example.com", "jos\u00e9@example.com", "jos\u00e9@example.com"},            // NFD
		{"JOSE\u0301@example.com", "JOS\u00c9@example.com", "jos\u00e9@example.com"},            // NFD, upper case
		{"\uff41\uff4e\uff41@example.com", "\uff41\uff4e\uff41@example.com", "ana@example.com"}, // fullwidth
		{"\uff21\uff2e\uff21@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com", "\uff21\uff2e\uff21@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com", "ana@example.com"},
		{"ana@exa\u0301mple.com", "ana@ex\u00e1mple.com", "ana@ex\u00e1mple.com"},
		{"\u2126@example.com", "\u03a9@example.com", "\u03c9@example.com"}, // the ohm sign is omega
	} {
		stored, key, ok := clients.ParseEmail(tc.in)
		if !ok || stored != tc.stored || key != tc.key {
			t.Errorf("%+q: %+q %+q %v, want %+q %+q", tc.in, stored, key, ok, tc.stored, tc.key)
		}
		if again, ok := clients.NormalizeEmail(key); !ok || again != key {
			t.Errorf("%+q: the key %+q is not its own key (%+q)", tc.in, key, again)
		}
	}
	for _, in := range []string{
		"ana\u200b@example.com", // zero-width space
		"an\u200da@example.com", // zero-width joiner
		"an\u200ca@example.com", // zero-width non-joiner
		"an\u2060a@example.com", // word joiner
		"\ufeffana@example.com", // BOM
		"an\u00ada@example.com", // soft hyphen
		"ana@exa\u00admple.com", // soft hyphen in the domain
		"ana\u202e@example.com", "\u202aana@example.com", "\u202bana@example.com", "\u202cana@example.com", "\u202dana@example.com",
		"ana\u2066@example.com", "ana\u2067@example.com", "ana\u2068@example.com", "ana\u2069@example.com",
		"ana\u200e@example.com", "ana\u200f@example.com", "ana\u061c@example.com",
		"ana\ufe0f@example.com",     // variation selector
		"ana\u3164@example.com",     // Hangul filler
		"an\u034fa@example.com",     // combining grapheme joiner
		"ana\U000e0041@example.com", // tag
		"ana\u00a0@example.com",     // no-break space
		"ana\u3000x@example.com",    // ideographic space
		"an\u2028a@example.com",     // line separator
		"ana\u0007@example.com",     // a control
		"ana\uff20b@example.com",    // a fullwidth @ in the local part: its key is no address
		"Ana <ana@example.com>",     // display name
		"not-an-email",
		strings.Repeat("a", 250) + "@example.com",
	} {
		if stored, key, ok := clients.ParseEmail(in); ok {
			t.Errorf("%+q accepted as %+q (key %+q)", in, stored, key)
		}
	}
}

// invisible is what the re-keying migration strips from an address before
// computing its key: the characters ParseEmail refuses that show nothing.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// strip removes the invisible characters of s.
func strip(s string) string {
	return strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, s)
}

// Issue 24 item 5: the migration re-keys the stored addresses as if the
// rule had always applied. On a database holding the records the old rule
// made (key: the address in lower case), each address that is not plain
// ASCII gets the key ParseEmail gives what it looks like (invisible
// characters stripped, every one Go knows, checked here); where records of
// a company now share a key the oldest keeps it and the others lose it
// (still there, their addresses unchanged); plain ASCII keys stay; other
// companies are apart.
func TestEmailKeysMigrationReKeysLookAlikesKeepingTheOldest(t *testing.T) {
	t.Parallel()
	const before = "20261128002410"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url, owner := testkit.ScratchDBBefore(t, "email_keys", before)
	if _, err := owner.ExecContext(ctx, "INSERT INTO companies (id, name) VALUES ('co_a', 'A'), ('co_b', 'B'), ('co_c', 'C')"); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type row struct {
		id, company, email string
		age                int // minutes after t0
		key                string
	}
	rows := []row{
		{"cli_ana", "co_a", "Ana@Example.com", 0, "ana@example.com"},           // ASCII, oldest: keeps its key
		{"cli_ana_zwsp", "co_a", "ana\u200b@example.com", 1, ""},               // looks like it: loses
		{"cli_ana_wide", "co_a", "\uff41\uff4e\uff41@example.com", 2, ""},      // fullwidth: loses
		{"cli_bia_rlo", "co_a", "bia\u202e@example.com", 0, "bia@example.com"}, // a look-alike older than the ASCII record: keeps
		{"cli_bia", "co_a", "bia@example.com", 3, ""},                          // ASCII, younger: loses
		{"cli_jose_nfd", "co_a", "jose\u0301@example.com", 1, "jos\u00e9@example.com"},
		{"cli_jose_nfc", "co_a", "Jos\u00e9@example.com", 2, ""},
		{"cli_zoe", "co_a", "Zo\u00eb@Example.com", 0, "zo\u00eb@example.com"}, // alone: its key
		{"cli_carla", "co_a", "\uff23\uff41\uff52\uff4c\uff41@example.com", 0, "carla@example.com"},
		{"cli_dora", "co_a", "dora@example.com", 0, "dora@example.com"},
		{"cli_ana_b", "co_b", "ana\u200b@example.com", 5, "ana@example.com"}, // another company
	}
	// Every invisible character Go knows, in an address of its own.
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if invisible(r) {
			n++
			rows = append(rows, row{fmt.Sprintf("cli_inv_%d", n), "co_c", fmt.Sprintf("x%cy%d@example.com", r, n), 0, fmt.Sprintf("xy%d@example.com", n)})
		}
	}
	var ids, companies, emails, keys []string
	var created []time.Time
	for _, r := range rows {
		ids, companies, emails = append(ids, r.id), append(companies, r.company), append(emails, r.email)
		keys = append(keys, strings.ToLower(r.email)) // the old rule
		created = append(created, t0.Add(time.Duration(r.age)*time.Minute))
	}
	if _, err := owner.ExecContext(ctx, `INSERT INTO clients (id, company_id, name, email, email_normalized, created_at)
		SELECT id, company_id, 'Client', email, key, created_at FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[])
		AS r(id, company_id, email, key, created_at)`, pgdialect.Array(ids), pgdialect.Array(companies), pgdialect.Array(emails), pgdialect.Array(keys), pgdialect.Array(created)); err != nil {
		t.Fatal(err)
	}

	if _, err := db.Migrate(ctx, url); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	var out []struct {
		ID    string  `bun:"id"`
		Email string  `bun:"email"`
		Key   *string `bun:"email_normalized"`
	}
	if err := owner.NewSelect().Table("clients").Column("id", "email", "email_normalized").Scan(ctx, &out); err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		k := ""
		if o.Key != nil {
			k = *o.Key
		}
		got[o.ID] = [2]string{o.Email, k}
	}
	if len(got) != len(rows) {
		t.Fatalf("%d records after the migration, want %d", len(got), len(rows))
	}
	for _, r := range rows {
		g := got[r.id]
		if g[0] != r.email {
			t.Errorf("%s: address %+q, want it unchanged (%+q)", r.id, g[0], r.email)
		}
		if g[1] != r.key {
			t.Errorf("%s (%+q): key %+q, want %+q", r.id, r.email, g[1], r.key)
		}
		// The key is the one lead capture computes for what the address looks like.
		if want, ok := clients.NormalizeEmail(strip(r.email)); r.key != "" && (!ok || want != r.key) {
			t.Errorf("%s: the migration's key %+q, ParseEmail's %+q %v", r.id, r.key, want, ok)
		}
	}
	var forced bool
	if err := owner.QueryRowContext(ctx, "SELECT relforcerowsecurity FROM pg_class WHERE relname = 'clients'").Scan(&forced); err != nil || !forced {
		t.Fatalf("clients forces row-level security again: %v %v", forced, err)
	}
}
