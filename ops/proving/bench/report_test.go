package bench

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"
)

func TestMedianIsTheMiddleRunOrTheMeanOfTheTwoMiddleOnes(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{5578, 3719, 7400}, 5578},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := slices.Clone(tc.in)
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("median reordered its input: %v", tc.in)
		}
	}
}

func TestSpreadIsRangeOverMedian(t *testing.T) {
	if got := spread([]float64{75, 100, 125}); got != 0.5 {
		t.Errorf("spread = %v, want 0.5", got)
	}
	if got := spread([]float64{100}); got != 0 {
		t.Errorf("spread of one run = %v, want 0", got)
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	slices.Reverse(ds)
	for _, tc := range []struct {
		p    float64
		want float64
	}{{50, 50}, {99, 99}, {100, 100}, {1, 1}} {
		if got := percentile(ds, tc.p); got != tc.want {
			t.Errorf("p%v = %v ms, want %v", tc.p, got, tc.want)
		}
	}
	if got := percentile([]time.Duration{3 * time.Millisecond}, 99); got != 3 {
		t.Errorf("p99 of one sample = %v, want 3", got)
	}
}

func TestSummarizeReadsOnlyItsWindowAndCountsErrorsApart(t *testing.T) {
	var samples []sample
	// 10 requests per second for 20 s, 10 ms each in the first 10 s and
	// 20 ms after; one failure per second.
	for i := 1; i <= 200; i++ {
		at := time.Duration(i) * 100 * time.Millisecond
		lat := 10 * time.Millisecond
		if at > 10*time.Second {
			lat = 20 * time.Millisecond
		}
		samples = append(samples, sample{at: at, lat: lat, err: i%10 == 0})
	}
	early := summarize(samples, 5*time.Second, 10*time.Second)
	if early.n != 45 || early.errors != 5 || early.rps != 9 || early.p99 != 10 {
		t.Errorf("early window: %+v, want 45 samples, 5 errors, 9 req/s, p99 10 ms", early)
	}
	late := summarize(samples, 15*time.Second, 20*time.Second)
	if late.n != 45 || late.p50 != 20 {
		t.Errorf("late window: %+v, want 45 samples at 20 ms", late)
	}
	if empty := summarize(samples, 30*time.Second, 40*time.Second); empty.n != 0 || empty.rps != 0 {
		t.Errorf("window past the run: %+v", empty)
	}
}

func TestConfigNamesTheGrowthFigureAfterItsReadings(t *testing.T) {
	c := Config{Late: time.Minute} // as the command builds it: defaults not applied
	if got := c.GrowthName(); got != "growth_60s_vs_10s" {
		t.Errorf("GrowthName = %q", got)
	}
	if !c.growth() {
		t.Error("a 60 s late reading after a 10 s early one is a growth reading")
	}
	if (Config{}).withDefaults().growth() {
		t.Error("no late reading asked, yet growth is on")
	}
}

// figuresOfAFullRun are the figures the scenarios and the ceilings report,
// with made-up values.
func figuresOfAFullRun() Figures {
	var figs Figures
	add := func(name string, v float64) { figs = append(figs, Figure{name, v, "u"}) }
	add("pgbench_n_tps", 7500)
	add("pgbench_s_tps", 30000)
	add("nats_pub_per_s", 90000)
	rates := map[string]float64{"me_get": 16000, "me_get_limited": 12000, "sales_get": 2500,
		"orders_create": 600, HotTenant: 240, "leads_create": 1100, "sales_create": 250}
	for _, sc := range Scenarios() {
		add(sc.Name+"_rps", rates[sc.Name])
		add(sc.Name+"_p50_ms", 10)
		add(sc.Name+"_p99_ms", 40)
		if sc.Write {
			add(sc.Name+"_growth_60s_vs_10s", 0.05)
		}
	}
	figs[slices.IndexFunc(figs, func(f Figure) bool { return f.Name == "leads_create_growth_60s_vs_10s" })].Value = 0.3
	for _, n := range []string{"deliveries_sustained_per_s", "deliveries_sustained_p99_ms", "isolation_added_p99_ms", "api_rss_mb", "dispatch_rss_mb"} {
		add(n, 1)
	}
	return figs
}

func TestRatiosAreAgainstEachScenariosQuietCeiling(t *testing.T) {
	figs := figuresOfAFullRun()
	got := Figures(Ratios(figs, Scenarios()))
	for name, want := range map[string]float64{
		"orders_create_ratio": 600.0 / 7500, "leads_create_ratio": 1100.0 / 7500, "sales_create_ratio": 250.0 / 7500,
		"sales_get_ratio": 2500.0 / 30000, "me_get_ratio": 16000.0 / 30000,
	} {
		if v, ok := got.Get(name); !ok || math.Abs(v-want) > 1e-12 {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	if _, ok := got.Get(HotTenant + "_ratio"); ok {
		t.Error("the hot tenant is read against the spread figure, not a ceiling")
	}
	if r := Ratios(Figures{{"orders_create_rps", 600, "req/s"}}, Scenarios()); len(r) != 0 {
		t.Errorf("ratios without ceilings: %v", r)
	}
}

func TestDerivedHotTenantAndWorstGrowth(t *testing.T) {
	got := Figures(Derived(figuresOfAFullRun(), Scenarios(), "growth_60s_vs_10s"))
	if v, _ := got.Get("hot_tenant_ratio"); v != 0.4 {
		t.Errorf("hot_tenant_ratio = %v, want 240/600", v)
	}
	if v, _ := got.Get("growth_60s_vs_10s"); v != 0.3 {
		t.Errorf("growth_60s_vs_10s = %v, want the worst write's 0.3", v)
	}
	if v, _ := got.Get("limiter_throughput_ratio"); v != 0.75 {
		t.Errorf("limiter_throughput_ratio = %v", v)
	}
}

func TestAFullRunsReportHoldsEveryRequiredKeyAndSurvivesJSON(t *testing.T) {
	figs := figuresOfAFullRun()
	figs = append(figs, Ratios(figs, Scenarios())...)
	figs = append(figs, Derived(figs, Scenarios(), "growth_60s_vs_10s")...)
	rep := Report{TakenAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Meta: map[string]any{"runs": 3}, Figures: figs}
	if m := rep.Missing(); len(m) > 0 {
		t.Fatalf("missing %v", m)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]any
	if err := json.Unmarshal(b, &flat); err != nil {
		t.Fatal(err)
	}
	for _, k := range RequiredKeys {
		if _, ok := flat[k].(float64); !ok {
			t.Errorf("latest.json has no number at top-level key %q", k)
		}
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.TakenAt.Equal(rep.TakenAt) || len(back.Figures) != len(figs) || back.Meta["runs"] != 3.0 {
		t.Errorf("round trip: %v, %d figures, meta %v", back.TakenAt, len(back.Figures), back.Meta)
	}
	if v, _ := back.Figures.Get("orders_create_ratio"); v != 0.08 {
		t.Errorf("orders_create_ratio after JSON = %v, want 0.08", v)
	}
	if len(Report{Figures: Figures{{"x", math.NaN(), ""}}}.Missing()) == 0 {
		t.Error("an empty report lacks nothing?")
	}
	if _, err := json.Marshal(Report{Figures: Figures{{"x", math.Inf(1), ""}}}); err == nil {
		t.Error("an infinite figure was written")
	}
}
