package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/schema/mail"
	"oficina/streams"
)

// ReadTimeout bounds each figure read at scrape time; past it the figure
// is missing from the scrape (and oficina_metrics_read_errors_total counts
// it), well within Prometheus's default scrape timeout of 10 s.
const ReadTimeout = 3 * time.Second

// figures is a collector whose values are read at scrape time: read sends
// them as constant metrics. A failed read leaves its series out of the
// scrape, so an alert on their absence fires.
type figures struct {
	source string
	descs  []*prometheus.Desc
	read   func(ctx context.Context, ch chan<- prometheus.Metric) error
	errors prometheus.Counter
}

func (f *figures) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range f.descs {
		ch <- d
	}
}

func (f *figures) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ReadTimeout)
	defer cancel()
	if err := f.read(ctx, ch); err != nil {
		f.errors.Inc()
	}
}

func (m *Metrics) addFigures(source string, read func(ctx context.Context, ch chan<- prometheus.Metric) error, descs ...*prometheus.Desc) {
	m.Registry.MustRegister(&figures{source: source, descs: descs, read: read, errors: m.readErrors.WithLabelValues(source)})
}

// age is how long ago t was, 0 for the zero time (nothing waiting).
func age(now, t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return max(now.Sub(t).Seconds(), 0)
}

// Dispatcher is what WatchDispatcher reads of a dispatcher.
type Dispatcher interface {
	Partitions() int
	Owned() []int
	Backlog(ctx context.Context) ([]dispatch.PartitionBacklog, error)
}

// WatchDispatcher registers the dispatcher's figures read at scrape
// time: the partitions and those it owns, each owned partition's backlog
// in JetStream, and the retries past due in the database (db, the
// worker role's pool).
func (m *Metrics) WatchDispatcher(d Dispatcher, db bun.IDB) {
	m.GaugeFunc("oficina_dispatch_partitions", "Partitions of DELIVERIES, shared by the dispatchers.",
		func() float64 { return float64(d.Partitions()) })
	m.GaugeFunc("oficina_dispatch_partitions_owned", "Partitions of DELIVERIES this dispatcher owns.",
		func() float64 { return float64(len(d.Owned())) })
	pending := prometheus.NewDesc("oficina_dispatch_pending_messages",
		"Messages of an owned DELIVERIES partition not yet handed to its dispatcher (JetStream's num_pending).", []string{"partition"}, nil)
	ackPending := prometheus.NewDesc("oficina_dispatch_ack_pending_messages",
		"Messages of an owned DELIVERIES partition handed out and not yet acknowledged (queued behind the caps or in flight).", []string{"partition"}, nil)
	m.addFigures("partitions", func(ctx context.Context, ch chan<- prometheus.Metric) error {
		bs, err := d.Backlog(ctx)
		for _, b := range bs {
			p := strconv.Itoa(b.Partition)
			ch <- prometheus.MustNewConstMetric(pending, prometheus.GaugeValue, float64(b.Pending), p)
			ch <- prometheus.MustNewConstMetric(ackPending, prometheus.GaugeValue, float64(b.AckPending), p)
		}
		return err
	}, pending, ackPending)

	due := prometheus.NewDesc("oficina_webhook_retries_past_due",
		"Pending deliveries whose scheduled retry time has passed (all companies).", nil, nil)
	oldest := prometheus.NewDesc("oficina_webhook_retries_oldest_past_due_seconds",
		"How long ago the earliest past-due retry was due; 0 when none is.", nil, nil)
	m.addFigures("retries", func(ctx context.Context, ch chan<- prometheus.Metric) error {
		now := time.Now()
		n, first, err := dispatch.PastDue(ctx, db, now)
		if err != nil {
			return err
		}
		ch <- prometheus.MustNewConstMetric(due, prometheus.GaugeValue, float64(n))
		ch <- prometheus.MustNewConstMetric(oldest, prometheus.GaugeValue, age(now, first))
		return nil
	}, due, oldest)
}

// WatchOutbox registers the outbox's lag read at scrape time (db, the
// worker role's pool): what is not on NATS yet and how old the oldest is.
func (m *Metrics) WatchOutbox(db bun.IDB) {
	m.outbox.get(func() struct{} {
		unpublished := prometheus.NewDesc("oficina_outbox_unpublished",
			"Outbox rows not yet published to NATS (all companies), by kind: event or delivery.", []string{"kind"}, nil)
		oldest := prometheus.NewDesc("oficina_outbox_oldest_unpublished_age_seconds",
			"Age of the oldest outbox row not yet published to NATS; 0 when none.", nil, nil)
		m.addFigures("outbox", func(ctx context.Context, ch chan<- prometheus.Metric) error {
			lag, err := streams.ReadOutboxLag(ctx, db)
			if err != nil {
				return err
			}
			ch <- prometheus.MustNewConstMetric(unpublished, prometheus.GaugeValue, float64(lag.Events), "event")
			ch <- prometheus.MustNewConstMetric(unpublished, prometheus.GaugeValue, float64(lag.Deliveries), "delivery")
			ch <- prometheus.MustNewConstMetric(oldest, prometheus.GaugeValue, age(time.Now(), lag.Oldest))
			return nil
		}, unpublished, oldest)
		return struct{}{}
	})
}

// WatchMail registers the mail outbox's backlog read at scrape time (db,
// the worker role's pool).
func (m *Metrics) WatchMail(db bun.IDB) {
	m.mail.get(func() struct{} {
		backlog := prometheus.NewDesc("oficina_mail_backlog",
			"Mail to owners and admins neither sent nor given up (all companies).", nil, nil)
		m.addFigures("mail", func(ctx context.Context, ch chan<- prometheus.Metric) error {
			n, err := mail.Backlog(ctx, db)
			if err != nil {
				return err
			}
			ch <- prometheus.MustNewConstMetric(backlog, prometheus.GaugeValue, float64(n))
			return nil
		}, backlog)
		return struct{}{}
	})
}
