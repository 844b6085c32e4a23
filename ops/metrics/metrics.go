// Package metrics exposes Prometheus metrics: one registry per process
// with the public API's requests and latency, the webhook pipeline
// (dispatcher, relay, outbox, publish after commit), the database pools,
// the rate limiter, idempotency and the mail outbox — each part
// registered by the process that runs it. The lower packages know nothing
// of Prometheus: they take hooks (dispatch.Observer, streams.Relay.Ran,
// …) that this package fills, or answer figures read at scrape time.
// docs/operating.md lists every series.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is a registry with Oficina's collectors.
type Metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// readErrors counts figures that could not be read at scrape time
	// (their series are then missing from that scrape).
	readErrors *prometheus.CounterVec

	// Each part registers its series once, however often it is asked.
	dispatch     once[*dispatchObserver]
	relay        once[func(int, error)]
	publish      once[func(string)]
	fallback     once[func(int)]
	idem         once[func(string)]
	outbox, mail once[struct{}]
	mu           sync.Mutex
	pools        map[string]bool
}

// once runs a registration the first time it is asked for.
type once[T any] struct {
	o sync.Once
	v T
}

func (g *once[T]) get(make func() T) T {
	g.o.Do(func() { g.v = make() })
	return g.v
}

// New builds a registry (one per process; tests make their own).
func New() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry(), pools: map[string]bool{}}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "oficina_http_requests_total", Help: "Public API requests by route, method and status.",
	}, []string{"route", "method", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "oficina_http_request_duration_seconds", Help: "Public API latency by route and method.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"route", "method"})
	m.readErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "oficina_metrics_read_errors_total",
		Help: "Figures that could not be read at scrape time, by source; their series are missing from that scrape.",
	}, []string{"source"})
	m.Registry.MustRegister(m.requests, m.latency, m.readErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveRequest records one finished request.
func (m *Metrics) ObserveRequest(route, method string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(d.Seconds())
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// GaugeFunc registers a gauge read from f at each scrape.
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}
