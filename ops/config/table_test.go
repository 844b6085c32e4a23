package config

import (
	"os"
	"strings"
	"testing"
)

// Issue 23 item 2: docs/operating.md's configuration table names every
// setting, and renders whole: its rows are one block of table lines (a
// paragraph in the middle had turned the rows after it into raw text, and
// OFICINA_EXTRA_CA_FILE was missing).
func TestEverySettingIsInTheRenderedConfigurationTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	const header = "| Variable | Default | Meaning |"
	_, after, ok := strings.Cut(string(b), "\n"+header+"\n")
	if !ok {
		t.Fatalf("docs/operating.md has no %q table", header)
	}
	var table []string
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "|") {
			break // the table ends at its first line that is not a row
		}
		table = append(table, line)
	}
	var c Config
	for _, s := range c.settings() {
		if !strings.Contains(strings.Join(table, "\n"), "`"+s.env+"`") {
			t.Errorf("%s is not in the configuration table (or is in rows the table no longer renders)", s.env)
		}
	}
	if rest := strings.Join(strings.Split(after, "\n")[len(table):], "\n"); strings.Contains(rest, "\n| `OFICINA_") {
		t.Errorf("rows of settings after the table's end: a line that is not a row splits it")
	}
}
