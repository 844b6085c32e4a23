package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// RequiredKeys are the figures issue 16 asks var/bench/latest.json to hold
// after a full `make bench`: each the median of its runs, the ratios
// against the quiet ceilings measured first.
var RequiredKeys = []string{
	"orders_create_ratio", "leads_create_ratio", "sales_create_ratio", "sales_get_ratio",
	"orders_create_p99_ms", "hot_tenant_ratio",
	"deliveries_sustained_per_s", "deliveries_sustained_p99_ms",
	"isolation_added_p99_ms", "growth_60s_vs_10s",
	"api_rss_mb", "dispatch_rss_mb",
}

// Figures in the order they were measured.
type Figures []Figure

// Get returns the figure called name.
func (fs Figures) Get(name string) (float64, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// Ratios divides each scenario's rate by its quiet ceiling:
// <name>_ratio = <name>_rps / ceiling, for every scenario of scenarios that
// names a ceiling and whose rate and ceiling are both in figs.
func Ratios(figs Figures, scenarios []Scenario) []Figure {
	var out []Figure
	for _, sc := range scenarios {
		if sc.Ceiling == "" {
			continue
		}
		rps, ok := figs.Get(sc.Name + "_rps")
		c, cok := figs.Get(sc.Ceiling)
		if ok && cok && c > 0 {
			out = append(out, Figure{sc.Name + "_ratio", rps / c, "ratio of " + sc.Ceiling})
		}
	}
	return out
}

// Derived figures compare scenarios of the same run:
// limiter_throughput_ratio and limiter_added_p50_ms (me_get with and
// without the limiter), hot_tenant_ratio (32 clients on one company over
// the same write spread over 32), and growthName (e.g. growth_60s_vs_10s):
// the worst write's slow-down from the early reading to the late one, as
// a fraction (positive = slower).
func Derived(figs Figures, scenarios []Scenario, growthName string) []Figure {
	var out []Figure
	on, okOn := figs.Get("me_get_limited_rps")
	off, okOff := figs.Get("me_get_rps")
	if okOn && okOff && off > 0 {
		p50On, _ := figs.Get("me_get_limited_p50_ms")
		p50Off, _ := figs.Get("me_get_p50_ms")
		out = append(out, Figure{"limiter_throughput_ratio", on / off, "ratio"},
			Figure{"limiter_added_p50_ms", p50On - p50Off, "ms"})
	}
	hot, okHot := figs.Get(HotTenant + "_rps")
	spread, okSpread := figs.Get(HotTenantSpread + "_rps")
	if okHot && okSpread && spread > 0 {
		out = append(out, Figure{"hot_tenant_ratio", hot / spread, "ratio"})
	}
	worst, found := math.Inf(-1), false
	for _, sc := range scenarios {
		if g, ok := figs.Get(sc.Name + "_" + growthName); ok && sc.Write {
			worst, found = max(worst, g), true
		}
	}
	if found {
		out = append(out, Figure{growthName, worst, "fraction"})
	}
	return out
}

// Report is what var/bench/latest.json holds: when, how (Meta: run
// settings and the machine's state) and the figures. As JSON it is one
// flat object — taken_at, meta, units, then every figure's name with its
// value — so `jq .orders_create_ratio` reads a figure.
type Report struct {
	TakenAt time.Time
	Meta    map[string]any
	Figures Figures
}

var reportFields = []string{"taken_at", "meta", "units"}

// MarshalJSON writes the flat object; values are rounded to 3 decimals.
func (r Report) MarshalJSON() ([]byte, error) {
	m := map[string]any{"taken_at": r.TakenAt.UTC().Format(time.RFC3339), "meta": r.Meta}
	units := map[string]string{}
	for _, f := range r.Figures {
		if slices.Contains(reportFields, f.Name) {
			return nil, fmt.Errorf("bench: figure named %q", f.Name)
		}
		if math.IsNaN(f.Value) || math.IsInf(f.Value, 0) {
			return nil, fmt.Errorf("bench: figure %s is %v", f.Name, f.Value)
		}
		m[f.Name] = math.Round(f.Value*1000) / 1000
		units[f.Name] = f.Unit
	}
	m["units"] = units
	return json.MarshalIndent(m, "", "  ")
}

// UnmarshalJSON reads what MarshalJSON wrote; figures come back sorted by
// name.
func (r *Report) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	var taken string
	var units map[string]string
	if err := json.Unmarshal(raw["taken_at"], &taken); err != nil {
		return fmt.Errorf("bench: taken_at: %w", err)
	}
	t, err := time.Parse(time.RFC3339, taken)
	if err != nil {
		return fmt.Errorf("bench: taken_at: %w", err)
	}
	if m, ok := raw["meta"]; ok {
		if err := json.Unmarshal(m, &r.Meta); err != nil {
			return fmt.Errorf("bench: meta: %w", err)
		}
	}
	if u, ok := raw["units"]; ok {
		if err := json.Unmarshal(u, &units); err != nil {
			return fmt.Errorf("bench: units: %w", err)
		}
	}
	r.TakenAt, r.Figures = t, nil
	for name, v := range raw {
		if slices.Contains(reportFields, name) {
			continue
		}
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("bench: figure %s: %w", name, err)
		}
		r.Figures = append(r.Figures, Figure{name, f, units[name]})
	}
	slices.SortFunc(r.Figures, func(a, b Figure) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// Missing lists the RequiredKeys that r lacks.
func (r Report) Missing() []string {
	var out []string
	for _, k := range RequiredKeys {
		if _, ok := r.Figures.Get(k); !ok {
			out = append(out, k)
		}
	}
	return out
}
