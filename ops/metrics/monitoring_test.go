package metrics_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"oficina/ops/testkit"
)

const monitoring = "../../docs/monitoring"

// rulesFile is a Prometheus rules file, as far as these tests read it.
type rulesFile struct {
	Groups []ruleGroup `yaml:"groups"`
}

type ruleGroup struct {
	Name  string `yaml:"name"`
	Rules []rule `yaml:"rules"`
}

type rule struct {
	Alert       string            `yaml:"alert,omitempty"`
	Record      string            `yaml:"record,omitempty"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

func readRules(t *testing.T) rulesFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(monitoring, "oficina-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rf rulesFile
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatal(err)
	}
	return rf
}

// dashboard is the part of the Grafana dashboard these tests read.
type dashboard struct {
	Title  string `json:"title"`
	UID    string `json:"uid"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		GridPos struct{ H, W, X, Y int } `json:"gridPos"`
		Targets []struct {
			Expr  string `json:"expr"`
			RefID string `json:"refId"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(monitoring, "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// seriesNames are the metric names an expression reads.
var seriesName = regexp.MustCompile(`\b(?:oficina|go_sql)_[a-z0-9_]+`)

func namesIn(expr string) []string {
	var out []string
	for _, n := range seriesName.FindAllString(expr, -1) {
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if strings.HasSuffix(n, "_seconds"+suffix) {
				n = strings.TrimSuffix(n, suffix)
			}
		}
		out = append(out, n)
	}
	return out
}

// anchors are the GitHub anchors of docs/operating.md's headings.
func anchors(t *testing.T) (map[string]bool, string) {
	t.Helper()
	b, err := os.ReadFile("../../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.TrimSpace(strings.TrimLeft(h, "#"))
			out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
		}
	}
	return out, string(b)
}

// Issue 18 item 5: the alert rules and the dashboard read only series the
// processes expose; every alert has a severity, a summary and a runbook
// that is a section of docs/operating.md; docs/operating.md names every
// series.
func TestRulesAndDashboardReadOnlyExposedSeriesAndAreDocumented(t *testing.T) {
	t.Parallel()
	exposed := map[string]bool{}
	fams, err := every(t, fakeDispatcher{}).Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		exposed[f.GetName()] = true
	}
	heads, doc := anchors(t)
	alerts := 0
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			alerts++
			for _, n := range namesIn(r.Expr) {
				if !exposed[n] {
					t.Errorf("alert %s reads %s, which no process exposes", r.Alert, n)
				}
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("alert %s: severity %q", r.Alert, s)
			}
			anchor, _ := strings.CutPrefix(r.Annotations["runbook"], "docs/operating.md#")
			if r.Annotations["summary"] == "" || !heads[anchor] || anchor != strings.ToLower(r.Alert) {
				t.Errorf("alert %s: summary %q, runbook %q: want both, the runbook a section of docs/operating.md named after the alert",
					r.Alert, r.Annotations["summary"], r.Annotations["runbook"])
			}
		}
	}
	if alerts == 0 {
		t.Fatal("no alert read")
	}

	d := readDashboard(t)
	if d.Title == "" || d.UID == "" {
		t.Errorf("dashboard title %q uid %q", d.Title, d.UID)
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.X+p.GridPos.W > 24 || p.GridPos.W <= 0 || p.GridPos.H <= 0 {
			t.Errorf("panel %q: grid %+v", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: %d queries, data source %+v; want queries on the ${datasource} variable", p.Title, len(p.Targets), p.Datasource)
		}
		for _, q := range p.Targets {
			names := namesIn(q.Expr)
			if len(names) == 0 {
				t.Errorf("panel %q reads no Oficina series: %s", p.Title, q.Expr)
			}
			for _, n := range names {
				if !exposed[n] {
					t.Errorf("panel %q reads %s, which no process exposes", p.Title, n)
				}
			}
		}
	}

	for n := range exposed {
		if (strings.HasPrefix(n, "oficina_") || strings.HasPrefix(n, "go_sql_")) && !strings.Contains(doc, "`"+n) {
			t.Errorf("docs/operating.md does not name %s", n)
		}
	}
}

// Issue 18 item 5: the rules pass `promtool check rules` and their unit
// tests (oficina-rules.test.yml: the alerts fire when they should, missing
// data included), and every query of the dashboard is valid PromQL.
func TestRulesAndDashboardPassPromtool(t *testing.T) {
	t.Parallel()
	tool := testkit.Promtool(t)
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(tool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(monitoring, "check", "rules", "oficina-rules.yml")
	run(monitoring, "test", "rules", "oficina-rules.test.yml")

	// The dashboard's queries as recording rules: promtool parses each.
	g := ruleGroup{Name: "dashboard"}
	for _, p := range readDashboard(t).Panels {
		for _, q := range p.Targets {
			g.Rules = append(g.Rules, rule{Record: "dashboard:query", Expr: strings.ReplaceAll(q.Expr, "$__rate_interval", "5m")})
		}
	}
	b, err := yaml.Marshal(rulesFile{Groups: []ruleGroup{g}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard-rules.yml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	run(dir, "check", "rules", "dashboard-rules.yml")
}
