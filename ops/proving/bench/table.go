package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The table of docs/performance.md sits between these markers and is
// written only by RenderTable (oficina bench -table), from the report
// stored beside the page, so the page and the figures cannot disagree.
const (
	TableStart = "<!-- bench-table:start: written by `make bench-table` from docs/performance.json; do not edit -->"
	TableEnd   = "<!-- bench-table:end -->"
)

// Pending is the table's text before any quiet run was recorded.
const Pending = "_To be regenerated: no figures recorded yet. Run `make bench` on a quiet machine, then `make bench-table`._\n"

// targetRow is one line of issue 16's targets.
type targetRow struct {
	figure, target string
	value          func(fs Figures) string
	ratio          func(fs Figures) string
}

// fmtv formats name's value with format (a fmt verb, or "rate" for a
// whole number with thousands separators); "—" when absent.
func fmtv(fs Figures, name, format string) string {
	v, ok := fs.Get(name)
	if !ok {
		return "—"
	}
	if format == "rate" {
		return thousands(v)
	}
	return fmt.Sprintf(format, v)
}

// thousands is v rounded to a whole number, with commas every 3 digits.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if v < -0.5 {
		return "-" + b.String()
	}
	return b.String()
}

func writeRow(name, label string) targetRow {
	return targetRow{figure: label,
		value: func(fs Figures) string {
			return fmtv(fs, name+"_rps", "rate") + " req/s, p50 " + fmtv(fs, name+"_p50_ms", "%.1f") + " / p99 " + fmtv(fs, name+"_p99_ms", "%.1f") + " ms"
		},
		ratio: func(fs Figures) string { return fmtv(fs, name+"_ratio", "%.3f") },
	}
}

func targetRows(early, late string) []targetRow {
	growth := "growth_" + late + "s_vs_" + early + "s"
	orders := writeRow("orders_create", "POST /service_orders (Idempotency-Key, 32 companies)")
	orders.target = "≥ 0.20 of -N, p99 ≤ 50 ms"
	leads := writeRow("leads_create", "POST /leads (Idempotency-Key)")
	leads.target = "≥ 0.30 of -N"
	sales := writeRow("sales_create", "POST /sales (2 items + installments, Idempotency-Key)")
	sales.target = "≥ 0.12 of -N"
	read := writeRow("sales_get", "GET /sales/{id}")
	read.target = "≥ 0.15 of -S"
	hot := writeRow(HotTenant, "hot tenant: POST /service_orders, 32 clients on 1 company")
	hot.ratio = func(fs Figures) string { return fmtv(fs, "hot_tenant_ratio", "%.3f") + " of the spread figure" }
	hot.target = "≥ 0.5 of the spread figure"
	return []targetRow{orders, leads, sales, read, hot,
		{figure: "sustained deliveries to the HTTPS receiver", target: "≥ 5,000/s offered and achieved, p99 ≤ 50 ms",
			value: func(fs Figures) string {
				return fmtv(fs, "deliveries_sustained_per_s", "rate") + "/s of " + fmtv(fs, "deliveries_sustained_offered_per_s", "rate") +
					"/s offered (" + fmtv(fs, "deliveries_sustained_target_per_s", "rate") + " asked), p50 " +
					fmtv(fs, "deliveries_sustained_p50_ms", "%.1f") + " / p99 " + fmtv(fs, "deliveries_sustained_p99_ms", "%.1f") +
					" ms, " + fmtv(fs, "deliveries_sustained_parked", "rate") + " parked at most; highest rate sustained " +
					fmtv(fs, "deliveries_sustainable_per_s", "rate") + "/s"
			},
			ratio: func(Figures) string { return "" }},
		{figure: "PostgreSQL CPU per sustained delivery", target: "≤ 0.15 ms",
			value: func(fs Figures) string {
				return fmtv(fs, "deliveries_sustained_cpu_ms_postgres", "%.3f") + " ms (dispatcher " +
					fmtv(fs, "deliveries_sustained_cpu_ms_dispatch", "%.3f") + " ms)"
			},
			ratio: func(Figures) string { return "" }},
		{figure: "log bytes per delivery (events, deliveries, attempts with their indexes, after the sustained run)", target: "≤ 2× the body",
			value: func(fs Figures) string { return fmtv(fs, "log_bytes_per_delivery", "rate") + " B" },
			ratio: func(Figures) string { return "" }},
		{figure: "retention: dropping one day of the log", target: "reported; not growing with the rows",
			value: func(fs Figures) string {
				return fmtv(fs, "retention_drop_ms_10000", "%.0f") + " ms for 10,000 deliveries, " +
					fmtv(fs, "retention_drop_ms_1000000", "%.0f") + " ms for 1,000,000"
			},
			ratio: func(Figures) string { return "" }},
		{figure: "isolation (failing endpoint, backlog)", target: "others' p99 + ≤ 5 ms",
			value: func(fs Figures) string {
				return "+" + fmtv(fs, "isolation_added_p99_ms", "%.1f") + " ms: p99 " + fmtv(fs, "e2e_p99_ms", "%.1f") + " ms (" +
					fmtv(fs, "isolation_base_samples", "rate") + " samples/run) → " + fmtv(fs, "e2e_p99_ms_failing_backlog", "%.1f") +
					" ms (" + fmtv(fs, "isolation_loaded_samples", "rate") + " samples/run)"
			},
			ratio: func(fs Figures) string { return "×" + fmtv(fs, "isolation_p99_ratio", "%.2f") }},
		{figure: "write rate at " + late + " s vs at " + early + " s into a run, worst write", target: "≤ 10 % slower",
			value: func(fs Figures) string {
				v, ok := fs.Get(growth)
				if !ok {
					return "—"
				}
				worst := ""
				for _, f := range fs {
					if name, ok := strings.CutSuffix(f.Name, "_"+growth); ok && f.Value == v {
						worst = " (" + name + ")"
					}
				}
				return fmt.Sprintf("%.1f %% slower%s", 100*v, worst)
			},
			ratio: func(Figures) string { return "" }},
		{figure: "memory (peak RSS)", target: "API ≤ 80 MiB, dispatcher ≤ 128 MiB",
			value: func(fs Figures) string {
				return "API " + fmtv(fs, "api_rss_mb", "%.0f") + " MiB, dispatcher " + fmtv(fs, "dispatch_rss_mb", "%.0f") + " MiB"
			},
			ratio: func(Figures) string { return "" }},
		{figure: "quiet ceilings (measured first)", target: "",
			value: func(fs Figures) string {
				return "pgbench -N " + fmtv(fs, "pgbench_n_tps", "rate") + " tx/s, -S " + fmtv(fs, "pgbench_s_tps", "rate") +
					" tx/s, NATS publish " + fmtv(fs, "nats_pub_per_s", "rate") + " msg/s"
			},
			ratio: func(Figures) string { return "" }},
	}
}

// RenderTable is the text between the markers: nil gives Pending; a
// report gives the targets table and, folded, every figure it holds.
func RenderTable(r *Report) string {
	if r == nil {
		return Pending
	}
	var b strings.Builder
	meta := func(k string) string {
		if v, ok := r.Meta[k]; ok {
			return fmt.Sprint(v)
		}
		return "?"
	}
	fmt.Fprintf(&b, "Measured %s by `make bench`: %s runs of %s s each (writes read at %s s and %s s), autovacuum %s, load average %s before the run.\n\n",
		r.TakenAt.UTC().Format(time.DateOnly), meta("runs"), meta("run_seconds"), meta("early_seconds"), meta("late_seconds"),
		meta("autovacuum"), meta("loadavg_start"))
	if r.Meta["profile"] == true {
		// Profiling costs CPU during each scenario's first run: said, so the
		// figures are read with it.
		b.WriteString("Taken with `-profile` (Go CPU profiles of each scenario's first run, PostgreSQL's `track_functions`).\n\n")
	}
	b.WriteString("| Figure | Value (median of runs) | Ratio to the quiet ceiling | Target (issues 16, 25) |\n|---|---|---|---|\n")
	for _, row := range targetRows(meta("early_seconds"), meta("late_seconds")) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row.figure, row.value(r.Figures), row.ratio(r.Figures), row.target)
	}
	figs := slices.Clone(r.Figures)
	slices.SortFunc(figs, func(a, b Figure) int { return strings.Compare(a.Name, b.Name) })
	b.WriteString("\n<details><summary>Every figure of the run</summary>\n\n| Figure | Value | Unit |\n|---|---|---|\n")
	for _, f := range figs {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Name, strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", f.Value), "0"), "."), f.Unit)
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// ReplaceTable puts table between the markers of doc.
func ReplaceTable(doc, table string) (string, error) {
	i := strings.Index(doc, TableStart)
	j := strings.Index(doc, TableEnd)
	if i < 0 || j < i {
		return "", errors.New("bench: the page has no table markers")
	}
	return doc[:i] + TableStart + "\n" + table + TableEnd + doc[j+len(TableEnd):], nil
}

// TableOf returns the text between the markers of doc.
func TableOf(doc string) (string, error) {
	i := strings.Index(doc, TableStart)
	j := strings.Index(doc, TableEnd)
	if i < 0 || j < i {
		return "", errors.New("bench: the page has no table markers")
	}
	return strings.TrimPrefix(doc[i+len(TableStart):j], "\n"), nil
}
