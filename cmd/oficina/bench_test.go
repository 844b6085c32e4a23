package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"oficina/ops/proving/bench"
)

func TestBenchSecondsSetsTheRunLength(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 10 * time.Second, "5": 5 * time.Second, "2.5": 2500 * time.Millisecond} {
		if got, err := benchSeconds(in); err != nil || got != want {
			t.Errorf("BENCH_SECONDS=%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "-3", "10s", "ten"} {
		if _, err := benchSeconds(bad); err == nil {
			t.Errorf("BENCH_SECONDS=%q accepted", bad)
		}
	}
}

// The table is written from a full report only, and the report is copied
// beside the page so the two are committed together.
func TestBenchTableWritesThePageAndCopiesItsReport(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "performance.md")
	page := "# Performance\n\n" + bench.TableStart + "\n" + bench.Pending + bench.TableEnd + "\n\nafter\n"
	if err := os.WriteFile(doc, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	var figs bench.Figures
	for _, k := range bench.RequiredKeys {
		figs = append(figs, bench.Figure{Name: k, Value: 1, Unit: "u"})
	}
	in := filepath.Join(dir, "latest.json")
	write := func(r bench.Report) {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(in, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	write(bench.Report{TakenAt: time.Now(), Figures: figs[1:]})
	if err := writeBenchTable(in, doc, io.Discard); err == nil || !strings.Contains(err.Error(), bench.RequiredKeys[0]) {
		t.Errorf("a partial report made a table: %v", err)
	}
	if b, _ := os.ReadFile(doc); string(b) != page {
		t.Error("the page changed after a refused report")
	}

	write(bench.Report{TakenAt: time.Now(), Meta: map[string]any{"runs": 3}, Figures: figs})
	if err := writeBenchTable(in, doc, io.Discard); err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(filepath.Join(dir, "performance.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	if err := json.Unmarshal(copied, &rep); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(doc)
	table, err := bench.TableOf(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if table != bench.RenderTable(&rep) || !strings.HasSuffix(string(b), bench.TableEnd+"\n\nafter\n") {
		t.Errorf("page:\n%s", b)
	}
}
