package testkit

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one answer of a /metrics: its text and its series.
type Scrape struct {
	Text     []byte
	Families map[string]*dto.MetricFamily
}

// ScrapeMetrics GETs url (a /metrics), with the operator token when one is
// given, and parses the answer.
func ScrapeMetrics(t testing.TB, url, token string) Scrape {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scrape %s: %d %v %s", url, resp.StatusCode, err, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return Scrape{Text: b, Families: fams}
}

// Value is the value of the series of name whose labels include labels
// (name=value pairs); false when there is none. A histogram's value is its
// count.
func (s Scrape) Value(name string, labels ...string) (float64, bool) {
	f := s.Families[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		case m.Untyped != nil:
			return m.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// LintMetrics checks an exposition as `promtool check metrics` does: with
// client_golang's promlint (the same linter) always, and with promtool
// itself when it is installed (Debian's prometheus package; .ci/run
// installs it, and under CI its absence fails the test).
func LintMetrics(t testing.TB, what string, text []byte) {
	t.Helper()
	problems, err := promlint.New(bytes.NewReader(text)).Lint()
	if err != nil {
		t.Fatalf("%s: promlint: %v", what, err)
	}
	for _, p := range problems {
		t.Errorf("%s: promlint: %s: %s", what, p.Metric, p.Text)
	}
	tool := promtool(t)
	if tool == "" {
		return
	}
	cmd := exec.Command(tool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: promtool check metrics: %v\n%s", what, err, out)
	}
}

// Promtool returns the path of promtool, skipping the test without it
// (failing it under CI, which installs it).
func Promtool(t testing.TB) string {
	t.Helper()
	tool := promtool(t)
	if tool == "" {
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	return tool
}

// promtool is the path of promtool, "" without it (logged; fatal under
// CI).
func promtool(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatal("promtool not installed; under CI it must be (.ci/run installs Debian's prometheus package)")
	}
	if !strings.Contains(t.Name(), "/") { // once per test, not per subtest
		t.Log("promtool not installed: checked with promlint only")
	}
	return ""
}
