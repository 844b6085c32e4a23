package bench

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"
)

func fullReport() *Report {
	figs := figuresOfAFullRun()
	figs = append(figs, Ratios(figs, Scenarios())...)
	figs = append(figs, Derived(figs, Scenarios(), "growth_60s_vs_10s")...)
	return &Report{TakenAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Meta:    map[string]any{"runs": 3, "run_seconds": 10, "early_seconds": 10, "late_seconds": 60, "autovacuum": "on", "loadavg_start": 0.2},
		Figures: figs}
}

func TestTableRowsCarryTheReportsFigures(t *testing.T) {
	table := RenderTable(fullReport())
	for _, want := range []string{
		"Measured 2026-11-30 by `make bench`: 3 runs of 10 s each (writes read at 10 s and 60 s), autovacuum on, load average 0.2",
		"| POST /service_orders (Idempotency-Key, 32 companies) | 600 req/s, p50 10.0 / p99 40.0 ms | 0.080 | ≥ 0.20 of -N, p99 ≤ 50 ms |",
		"| POST /leads (Idempotency-Key) | 1,100 req/s, p50 10.0 / p99 40.0 ms | 0.147 |",
		"| GET /sales/{id} | 2,500 req/s, p50 10.0 / p99 40.0 ms | 0.083 | ≥ 0.15 of -S |",
		"| 0.400 of the spread figure | ≥ 0.5 of the spread figure |",
		"| write rate at 60 s vs at 10 s into a run, worst write | 30.0 % slower (leads_create) |  | ≤ 10 % slower |",
		"pgbench -N 7,500 tx/s, -S 30,000 tx/s, NATS publish 90,000 msg/s",
		"| `orders_create_ratio` | 0.08 | ratio of pgbench_n_tps |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if RenderTable(nil) != Pending {
		t.Error("no report: the table should say it is to be regenerated")
	}
}

func TestAbsentFiguresShowAsDashes(t *testing.T) {
	table := RenderTable(&Report{Meta: map[string]any{}})
	if !strings.Contains(table, "| POST /sales (2 items + installments, Idempotency-Key) | — req/s, p50 — / p99 — ms | — |") {
		t.Errorf("absent figures:\n%s", table)
	}
}

func TestThousands(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999.4: "999", 1000: "1,000", 16398.2: "16,398", 1234567: "1,234,567", -2500: "-2,500"} {
		if got := thousands(v); got != want {
			t.Errorf("thousands(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestReplaceTableKeepsTheRestOfThePage(t *testing.T) {
	page := "# P\n\nbefore\n\n" + TableStart + "\nold\n" + TableEnd + "\n\nafter\n"
	out, err := ReplaceTable(page, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if out != "# P\n\nbefore\n\n"+TableStart+"\nnew\n"+TableEnd+"\n\nafter\n" {
		t.Errorf("page:\n%s", out)
	}
	if got, _ := TableOf(out); got != "new\n" {
		t.Errorf("TableOf = %q", got)
	}
	if _, err := ReplaceTable("# no markers\n", "x"); err == nil {
		t.Error("a page without markers was accepted")
	}
}

// The page's table is what RenderTable makes of docs/performance.json, the
// report `make bench-table` copied beside it — or, before any quiet run
// was recorded, the pending note.
func TestPerformancePageTableIsWrittenFromItsJSON(t *testing.T) {
	page, err := os.ReadFile("../../../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := TableOf(string(page))
	if err != nil {
		t.Fatal(err)
	}
	want := Pending
	b, err := os.ReadFile("../../../docs/performance.json")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		t.Fatal(err)
	default:
		var rep Report
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatalf("docs/performance.json: %v", err)
		}
		want = RenderTable(&rep)
	}
	if got != want {
		t.Errorf("docs/performance.md's table is not what `make bench-table` writes; got:\n%s\nwant:\n%s", got, want)
	}
}
