package contract_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// probes are strings every pattern of the document is tried on: texts,
// blanks, contacts, times, ids and event names.
var probes = []string{"", " ", "\u3000", "a", "é", "a\x00b", "Ana Souza", "ana@example.com", " ana@example.com ",
	"ana@@example.com", "+55 11 91234-5678", "(011) 3333-4444", "123", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05.5Z",
	"2026-01-02", "sale.*", "sale.created", "*", "evt_" + strings.Repeat("0a", 16), "cli_" + strings.Repeat("a", 26),
	"sal_01", "x\u2028y", "\u0085"}

// Issue 26 item 6: every pattern of the document reads the same in the
// regular expressions of its readers (ECMA-262, as JavaScript validators
// and generators compile it, with and without the u flag) and in Go's
// (RE2, the validator of these tests and the server's constants): each
// compiles in both and matches the same probes.
func TestEveryPatternReadsTheSameInJavaScriptAndGo(t *testing.T) {
	t.Parallel()
	nodeTools(t)
	raw, err := os.ReadFile(document)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var patterns []string
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if p, ok := x["pattern"].(string); ok && !slices.Contains(patterns, p) {
				patterns = append(patterns, p)
			}
			for _, c := range x {
				collect(c)
			}
		case []any:
			for _, c := range x {
				collect(c)
			}
		}
	}
	collect(doc)
	in, _ := json.Marshal(map[string]any{"patterns": patterns, "probes": probes})
	script := `const {patterns, probes} = JSON.parse(process.argv[1]);
const out = {};
for (const p of patterns) for (const flags of ["", "u"]) {
  try { const re = new RegExp(p, flags); out[flags + " " + p] = probes.map(s => re.test(s)); }
  catch (e) { out[flags + " " + p] = String(e); }
}
console.log(JSON.stringify(out));`
	stdout, stderr, code := run(t, nil, "node", "-e", script, string(in))
	if code != 0 {
		t.Fatalf("node exited %d: %s", code, stderr)
	}
	var js map[string]any
	if err := json.Unmarshal([]byte(stdout), &js); err != nil {
		t.Fatalf("node printed %q: %v", stdout, err)
	}
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			t.Errorf("%q: Go: %v", p, err)
			continue
		}
		want := make([]any, len(probes))
		for i, s := range probes {
			want[i] = re.MatchString(s)
		}
		w, _ := json.Marshal(want)
		for _, flags := range []string{"", "u"} {
			got := js[flags+" "+p]
			if b, _ := json.Marshal(got); string(b) != string(w) {
				t.Errorf("%q (flags %q): JavaScript %v, Go %v", p, flags, got, want)
			}
		}
	}
	t.Logf("%d patterns, %d probes", len(patterns), len(probes))
}
