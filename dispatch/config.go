package dispatch

import (
	"crypto/tls"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/schema/secretbox"
	"oficina/schema/service"
)

// DefaultSchedule is the wait before each retry after a failed attempt:
// 10 retries over about 3 days (71.6 h), so 11 attempts in all.
var DefaultSchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 12 * time.Hour, 22 * time.Hour,
}

// Defaults of Config.
const (
	DefaultEndpointCap       = 5
	DefaultCompanyCap        = 10
	DefaultJitter            = 0.1
	DefaultMaxRetryAfter     = 24 * time.Hour
	DefaultDisableAfter      = 72 * time.Hour
	DefaultParkDelay         = 2 * time.Second
	DefaultFailingParkSpread = 5 * time.Minute
	DefaultFailingProbe      = 5 * time.Second
	DefaultAckWait           = 30 * time.Second
	DefaultLeaseTTL          = 10 * time.Second
	DefaultPlanFresh         = time.Second
	// DefaultMaxAckPending bounds the un-acked messages of a partition:
	// what waits in memory for a free slot. JetStream keeps the rest of a
	// healthy backlog (decision 0023).
	DefaultMaxAckPending = 500
	DefaultBatchSize     = 128
	DefaultBatchWorkers  = 2
)

// Config configures a Dispatcher. DB, JS and Client are required; zero
// fields take the defaults above.
type Config struct {
	// Base: its business clock (Now) is the clock of every rule (attempt
	// times, auto-disable, what is due); the retry schedule itself fires on
	// the NATS server's wall clock. Its wall clock times the sends.
	service.Base
	DB     *bun.DB
	JS     jetstream.JetStream
	Client *http.Client // destguard.Guard.Client() in production
	// CertifiedClient is Client presenting a client certificate, for the
	// endpoints that have one (destguard.Guard.ClientWithCertificate in
	// production). Nil: their attempts fail with client_certificate_unsupported.
	CertifiedClient func(tls.Certificate) *http.Client
	// Secrets opens the endpoints' sealed signing secrets
	// (OFICINA_SECRET_KEYS).
	Secrets *secretbox.Keyring
	// Observer is told each attempt, closure, give-up, disable and park
	// (metrics); nil: nobody.
	Observer Observer
	// ID names this process in the lease bucket (random when empty).
	ID string
	// Partitions of DELIVERIES (jsconfig's default when 0).
	Partitions int
	// Schedule lists the waits before retries; its length is the number of
	// retries.
	Schedule []time.Duration
	// Jitter spreads each wait by ±Jitter (a fraction); negative = none.
	Jitter float64
	// MaxRetryAfter bounds a receiver's Retry-After.
	MaxRetryAfter time.Duration
	// DisableAfter: an endpoint that only failed this long is disabled.
	DisableAfter time.Duration
	// ParkDelay is when a parked message (over its endpoint's window) comes back.
	ParkDelay time.Duration
	// FailingParkSpread spreads the parked backlog of a failing endpoint
	// (ParkDelay + random up to this), so a deep backlog costs a trickle of
	// re-parks while the endpoint is probed one delivery at a time.
	FailingParkSpread time.Duration
	// FailingProbeInterval: while an endpoint is failing, one delivery is
	// attempted at a time and no sooner than this after the last failure;
	// what arrives meanwhile is parked, no attempt spent.
	FailingProbeInterval time.Duration
	// AckWait of the partition consumers: how long a dead owner's
	// in-flight message waits before it is redelivered.
	AckWait time.Duration
	// LeaseTTL: a dead dispatcher's partitions are taken over after this.
	LeaseTTL time.Duration
	// LeaseReplicas of the lease bucket: set it to the streams' replicas
	// (3 in a cluster), or losing the one node that holds the bucket stops
	// every dispatcher. Default 1.
	LeaseReplicas int

	EndpointCap, CompanyCap int
	MaxAckPending           int
	// CompanyShare is what one company keeps of a full partition's
	// MaxAckPending (in flight and waiting) while more messages wait behind
	// it: the excess is parked so the others can be fetched. Default a
	// quarter of MaxAckPending.
	CompanyShare int
	// PlanFresh is how old a plan prepared while its job waited in a queue
	// (ahead.go) may be when its send starts; an older one is read again,
	// so an endpoint disabled, or a subscriber who lost access, while the
	// job waited is seen within PlanFresh. Default 1 s.
	PlanFresh time.Duration
	// BatchSize bounds the deliveries sharing one database transaction
	// before or after their sends; BatchWorkers transactions of each kind
	// run at once.
	BatchSize, BatchWorkers int
}

func (c Config) withDefaults() (Config, error) {
	if c.DB == nil || c.JS == nil || c.Client == nil {
		return c, errors.New("dispatch: DB, JS and Client are required")
	}
	if c.Secrets == nil {
		return c, errors.New("dispatch: Secrets, the key ring of the sealed signing secrets, is required")
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	if c.Partitions == 0 {
		c.Partitions = 16
	}
	if c.Schedule == nil {
		c.Schedule = DefaultSchedule
	}
	if c.Jitter == 0 {
		c.Jitter = DefaultJitter
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.MaxRetryAfter, DefaultMaxRetryAfter)
	def(&c.DisableAfter, DefaultDisableAfter)
	def(&c.ParkDelay, DefaultParkDelay)
	def(&c.FailingParkSpread, DefaultFailingParkSpread)
	def(&c.FailingProbeInterval, DefaultFailingProbe)
	def(&c.AckWait, DefaultAckWait)
	def(&c.LeaseTTL, DefaultLeaseTTL)
	def(&c.PlanFresh, DefaultPlanFresh)
	defi := func(n *int, v int) {
		if *n == 0 {
			*n = v
		}
	}
	defi(&c.EndpointCap, DefaultEndpointCap)
	defi(&c.CompanyCap, DefaultCompanyCap)
	defi(&c.MaxAckPending, DefaultMaxAckPending)
	defi(&c.BatchSize, DefaultBatchSize)
	defi(&c.BatchWorkers, DefaultBatchWorkers)
	// Held messages stay un-acked (kept alive past AckWait), so a company
	// holding the whole MaxAckPending would keep its partition's other
	// companies from being fetched: a full partition trims each to its share.
	defi(&c.CompanyShare, c.MaxAckPending/4)
	c.CompanyShare = max(c.CompanyShare, c.CompanyCap+1)
	return c, nil
}

// retryDelay is the wait after the attempt-th failed attempt (1-based), and
// false when attempts are exhausted. retryAfter (0 = none) from the
// receiver lengthens the wait, up to MaxRetryAfter.
func (c Config) retryDelay(attempt int, retryAfter time.Duration) (time.Duration, bool) {
	if attempt < 1 || attempt > len(c.Schedule) {
		return 0, false
	}
	d := c.Schedule[attempt-1]
	if c.Jitter > 0 {
		d += time.Duration((rand.Float64()*2 - 1) * c.Jitter * float64(d))
	}
	if retryAfter > 0 {
		d = max(d, min(retryAfter, c.MaxRetryAfter))
	}
	return max(d, 0), true
}
