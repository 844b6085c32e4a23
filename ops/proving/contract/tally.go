package contract

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// ReportEnv names a directory where each test binary leaves its contract
// summary (one file, rewritten as tests end); make test prints them after
// the run, so the counts appear once per test binary.
const ReportEnv = "OFICINA_CONTRACT_REPORT"

// Tally counts the responses a test binary checked. It is safe for
// concurrent use.
type Tally struct {
	mu          sync.Mutex
	checked     int // responses checked against an operation
	undescribed int // responses to requests the document has no operation for
	mismatched  int // checked responses with at least one mismatch
	tests       map[string]bool
	byOperation map[string]int // "POST /public/v1/leads → 201" → mismatched responses
	bySchema    map[string]int // failing schema keyword (or reason) → mismatches
	examples    []string
}

// maxExamples and maxSchemas bound what a summary quotes.
const (
	maxExamples = 8
	maxSchemas  = 15
)

// Add counts one checked response of test.
func (t *Tally) Add(test string, r Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.Operation == "" {
		t.undescribed++
		return
	}
	t.checked++
	if len(r.Mismatches) == 0 {
		return
	}
	t.mismatched++
	if t.tests == nil {
		t.tests, t.byOperation, t.bySchema = map[string]bool{}, map[string]int{}, map[string]int{}
	}
	for _, m := range r.Mismatches {
		k := m.Reason
		if m.Schema != "" {
			k = "#" + m.Schema
		}
		t.bySchema[k]++
	}
	t.tests[test] = true
	op := fmt.Sprintf("%s → %d", r.Operation, r.Mismatches[0].Status)
	t.byOperation[op]++
	// One example per operation and status, so the few quoted differ.
	if t.byOperation[op] == 1 && len(t.examples) < maxExamples {
		e := test + ": " + r.Mismatches[0].String()
		if n := len(r.Mismatches) - 1; n > 0 {
			e += fmt.Sprintf(" (and %d more in this answer)", n)
		}
		t.examples = append(t.examples, e)
	}
}

// Checked is the number of responses checked against an operation.
func (t *Tally) Checked() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.checked
}

// Summary is the tally for people: one line, then (when something did not
// match) the operations and a few examples.
func (t *Tally) Summary(name string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var sb strings.Builder
	fmt.Fprintf(&sb, "contract %s: %d responses checked against the OpenAPI document, %d mismatched in %d tests; %d answered requests the document has no operation for\n",
		name, t.checked, t.mismatched, len(t.tests), t.undescribed)
	if t.mismatched == 0 {
		return sb.String()
	}
	sb.WriteString("  mismatched answers by operation:\n")
	for _, op := range byCount(t.byOperation, 0) {
		fmt.Fprintf(&sb, "    %5d  %s\n", t.byOperation[op], op)
	}
	fmt.Fprintf(&sb, "  mismatches by failing schema keyword (%d distinct; the first %d):\n", len(t.bySchema), maxSchemas)
	for _, k := range byCount(t.bySchema, maxSchemas) {
		fmt.Fprintf(&sb, "    %5d  %s\n", t.bySchema[k], k)
	}
	for _, e := range t.examples {
		fmt.Fprintf(&sb, "  e.g. %s\n", e)
	}
	return sb.String()
}

// WriteReport writes text as this test binary's entry named name in the
// ReportEnv directory (nothing when the variable is unset). The file is
// replaced whole, so the last writer leaves the final counts.
func WriteReport(name, text string) error {
	dir := os.Getenv(ReportEnv)
	if dir == "" {
		return nil
	}
	file := filepath.Join(dir, strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(name)+".txt")
	tmp, err := os.CreateTemp(dir, ".report-*")
	if err != nil {
		return fmt.Errorf("contract: report: %w", err)
	}
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("contract: report: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("contract: report: %w", err)
	}
	return os.Rename(tmp.Name(), file)
}

// PackageName names the test binary running in the working directory by
// its path in the module ("http/public"); go test runs each binary in its
// package's folder.
func PackageName() string {
	wd, err := os.Getwd()
	if err != nil {
		return "unknown"
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return filepath.Base(wd)
			}
			return filepath.ToSlash(rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Base(wd)
		}
		dir = parent
	}
}

// byCount sorts the keys of m by count, most first (at most n; 0: all).
func byCount(m map[string]int, n int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b string) int {
		if d := m[b] - m[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	if n > 0 && len(ks) > n {
		ks = ks[:n]
	}
	return ks
}
