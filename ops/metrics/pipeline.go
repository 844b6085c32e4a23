package metrics

import (
	"database/sql"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"oficina/dispatch"
	"oficina/schema/idempotency"
	"oficina/streams"
	"oficina/tenant/ratelimit"
)

// Status classes of oficina_webhook_attempts_total: the receiver's, or
// none without an answer.
var statusClasses = []string{"2xx", "3xx", "4xx", "5xx"}

func statusClass(status int) string {
	if c := status/100 - 2; status >= 200 && c < len(statusClasses) {
		return statusClasses[c]
	}
	return "none"
}

// dispatchObserver is the dispatcher's dispatch.Observer.
type dispatchObserver struct {
	attempts         *prometheus.CounterVec
	duration         prometheus.Histogram
	latency          prometheus.Histogram
	gaveUp, disabled prometheus.Counter
	parked           prometheus.Counter
}

// Dispatch returns the dispatcher's observer (dispatch.Config.Observer),
// registering its series the first time.
func (m *Metrics) Dispatch() dispatch.Observer {
	return m.dispatch.get(func() *dispatchObserver {
		o := &dispatchObserver{
			attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "oficina_webhook_attempts_total",
				Help: "Webhook delivery messages handled, by outcome: what an attempt got, or why the delivery was closed without one (status_class none).",
			}, []string{"outcome", "status_class"}),
			duration: prometheus.NewHistogram(prometheus.HistogramOpts{
				Name: "oficina_webhook_attempt_duration_seconds", Help: "Duration of webhook attempts, from sending to the answer or giving up.",
				Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15},
			}),
			latency: prometheus.NewHistogram(prometheus.HistogramOpts{
				Name:    "oficina_webhook_delivery_latency_seconds",
				Help:    "Time from a delivery's recording (its write's commit) to the receiver's 2xx, retries included.",
				Buckets: []float64{.025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 6 * 3600, 24 * 3600, 72 * 3600},
			}),
			gaveUp: prometheus.NewCounter(prometheus.CounterOpts{
				Name: "oficina_webhook_deliveries_given_up_total",
				Help: "Deliveries failed for good after an attempt: attempts exhausted, or the endpoint disabled.",
			}),
			disabled: prometheus.NewCounter(prometheus.CounterOpts{
				Name: "oficina_webhook_endpoints_disabled_total", Help: "Endpoints the dispatcher disabled after they failed for 72 hours.",
			}),
			parked: prometheus.NewCounter(prometheus.CounterOpts{
				Name: "oficina_dispatch_parked_total",
				Help: "Delivery messages sent back to wait without an attempt: the endpoint failing, or the company over its share of a full partition.",
			}),
		}
		// Every series exists from the start, so rate() and absent()
		// see a zero rather than nothing.
		for _, out := range dispatch.Outcomes {
			switch out {
			case dispatch.OutcomeSucceeded:
				o.attempts.WithLabelValues(out, "2xx")
			case dispatch.OutcomeFailedStatus:
				for _, c := range statusClasses[1:] {
					o.attempts.WithLabelValues(out, c)
				}
			default:
				o.attempts.WithLabelValues(out, "none")
			}
		}
		m.Registry.MustRegister(o.attempts, o.duration, o.latency, o.gaveUp, o.disabled, o.parked)
		return o
	})
}

func (o *dispatchObserver) Attempted(a dispatch.Attempt) {
	o.attempts.WithLabelValues(a.Outcome, statusClass(a.Status)).Inc()
	o.duration.Observe(a.Duration.Seconds())
	if a.Outcome == dispatch.OutcomeSucceeded && a.SinceRecorded > 0 {
		o.latency.Observe(a.SinceRecorded.Seconds())
	}
}

func (o *dispatchObserver) Closed(outcome string) { o.attempts.WithLabelValues(outcome, "none").Inc() }
func (o *dispatchObserver) GaveUp()               { o.gaveUp.Inc() }
func (o *dispatchObserver) EndpointDisabled()     { o.disabled.Inc() }
func (o *dispatchObserver) Parked()               { o.parked.Inc() }

// RelayRan returns the relay's hook (streams.Relay.Ran), registering its
// series the first time.
func (m *Metrics) RelayRan() func(published int, err error) {
	return m.relay.get(func() func(int, error) {
		runs := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oficina_relay_runs_total", Help: "Rounds of the outbox relay, by result (ok or error).",
		}, []string{"result"})
		published := prometheus.NewCounter(prometheus.CounterOpts{
			Name: "oficina_relay_published_total", Help: "Messages the relay published: what publish after commit left behind.",
		})
		ok, failed := runs.WithLabelValues("ok"), runs.WithLabelValues("error")
		m.Registry.MustRegister(runs, published)
		return func(n int, err error) {
			published.Add(float64(n))
			if err != nil {
				failed.Inc()
			} else {
				ok.Inc()
			}
		}
	})
}

// PublishFailed returns the hook of the API's publisher
// (streams.Publisher.Failed), registering its series the first time.
func (m *Metrics) PublishFailed() func(reason string) {
	return m.publish.get(func() func(string) {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oficina_publish_after_commit_failures_total",
			Help: "Writes whose events were left to the relay instead of published after commit, by reason.",
		}, []string{"reason"})
		for _, r := range []string{streams.PublishDisconnected, streams.PublishBackpressure, streams.PublishError} {
			c.WithLabelValues(r)
		}
		m.Registry.MustRegister(c)
		return func(reason string) { c.WithLabelValues(reason).Inc() }
	})
}

// RateLimitFallback returns the limiter's hook (ratelimit.Config.Fallback),
// registering its series the first time.
func (m *Metrics) RateLimitFallback() func(requests int) {
	return m.fallback.get(func() func(int) {
		c := prometheus.NewCounter(prometheus.CounterOpts{
			Name: "oficina_ratelimit_fallbacks_total",
			Help: "Requests decided by this process's share of the company's ceiling, the shared budget in NATS out of reach.",
		})
		m.Registry.MustRegister(c)
		return func(n int) { c.Add(float64(n)) }
	})
}

// WatchRateLimit registers the limiter's gauges: how the rate limits are
// being counted.
func (m *Metrics) WatchRateLimit(lim *ratelimit.Limiter) {
	m.GaugeFunc("oficina_ratelimit_processes", "API processes sharing each company's ceiling, as last seen in NATS.",
		func() float64 { return float64(lim.Processes()) })
	m.GaugeFunc("oficina_ratelimit_local", "1 while rate limits are decided by this process's share (NATS out of reach).",
		func() float64 {
			if lim.Local() {
				return 1
			}
			return 0
		})
}

// Idempotency returns the public API's hook (public.Deps.Idempotency),
// registering its series the first time.
func (m *Metrics) Idempotency() func(result string) {
	return m.idem.get(func() func(string) {
		replays := prometheus.NewCounter(prometheus.CounterOpts{
			Name: "oficina_idempotency_replays_total", Help: "Writes answered with the stored answer of an earlier request with the same Idempotency-Key.",
		})
		conflicts := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oficina_idempotency_conflicts_total",
			Help: "Writes refused over their Idempotency-Key: key_reused (422, another request's key) or in_progress (409).",
		}, []string{"reason"})
		for _, r := range []string{idempotency.KeyReused, idempotency.KeyInProgress} {
			conflicts.WithLabelValues(r)
		}
		m.Registry.MustRegister(replays, conflicts)
		return func(result string) {
			if result == idempotency.Replayed {
				replays.Inc()
				return
			}
			conflicts.WithLabelValues(result).Inc()
		}
	})
}

// WatchPool registers the statistics of a database pool (go_sql_*, label
// db_name): connections open, in use and idle, waits for one. name is
// app (requests) or worker (relay, dispatch, sweeps); a pool already
// watched under name is not registered again.
func (m *Metrics) WatchPool(name string, db *sql.DB) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pools[name] {
		return
	}
	m.pools[name] = true
	m.Registry.MustRegister(collectors.NewDBStatsCollector(db, name))
}
