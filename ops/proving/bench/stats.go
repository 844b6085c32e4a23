package bench

import (
	"math"
	"slices"
	"time"
)

// sample is one finished request of a load run: when it finished, counted
// from the run's start, how long it took, and whether it failed.
type sample struct {
	at, lat time.Duration
	err     bool
}

// window summarises the samples that finished in (from, to].
type window struct {
	rps, p50, p99 float64
	n, errors     int
}

// summarize is the rate and latency of the requests that finished in
// (from, to] of a run. Failed requests are counted apart and are not
// samples of latency or rate.
func summarize(samples []sample, from, to time.Duration) window {
	var lat []time.Duration
	w := window{}
	for _, s := range samples {
		if s.at <= from || s.at > to {
			continue
		}
		if s.err {
			w.errors++
			continue
		}
		lat = append(lat, s.lat)
	}
	w.n = len(lat)
	if w.n == 0 || to <= from {
		return w
	}
	w.rps = float64(w.n) / (to - from).Seconds()
	w.p50 = percentile(lat, 50)
	w.p99 = percentile(lat, 99)
	return w
}

// percentile is the nearest-rank p-th percentile of ds, in milliseconds:
// the smallest value with at least p % of the samples at or below it.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return ms(s[min(len(s)-1, max(0, rank-1))])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// median of v: the middle value, or the mean of the two middle ones.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is how far apart runs were: (max − min) / median, 0 for fewer
// than two runs or a zero median.
func spread(v []float64) float64 {
	m := median(v)
	if len(v) < 2 || m == 0 {
		return 0
	}
	return (slices.Max(v) - slices.Min(v)) / m
}

// medians folds figures of several runs into one per name, the median of
// its values, in the order the names first appear.
func medians(figs []Figure) []Figure {
	var out []Figure
	vals := map[string][]float64{}
	for _, f := range figs {
		if _, seen := vals[f.Name]; !seen {
			out = append(out, Figure{Name: f.Name, Unit: f.Unit})
		}
		vals[f.Name] = append(vals[f.Name], f.Value)
	}
	for i := range out {
		out[i].Value = median(vals[out[i].Name])
	}
	return out
}
