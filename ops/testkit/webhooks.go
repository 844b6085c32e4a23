package testkit

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"oficina/dispatch"
	"oficina/dispatch/destguard"
	"oficina/ops/testkit/hooks"
)

// Received is one request a Receiver got.
type Received = hooks.Arrival

// Receiver starts a local HTTPS webhook receiver (hooks.Receiver) that
// answers with answer and reports each request on the returned channel
// before answering (buffered; requests beyond the buffer are answered, not
// reported, so a test that reads nothing never blocks it). Every body is
// checked against the OpenAPI webhooks section (CheckWebhook): a mismatch
// fails the test that started the receiver.
func Receiver(t testing.TB, answer http.HandlerFunc) (*httptest.Server, chan Received) {
	t.Helper()
	got := make(chan Received, 1000)
	r := NewReceiver(t, hooks.Options{Answer: answer, OnArrival: func(a hooks.Arrival) {
		select {
		case got <- a:
		default:
		}
	}})
	return r.Server(), got
}

// NewReceiver starts a hooks.Receiver for t, closed when t ends, that
// checks every body against the OpenAPI webhooks section (CheckWebhook)
// besides o.Check.
func NewReceiver(t testing.TB, o hooks.Options) *hooks.Receiver {
	t.Helper()
	check := o.Check
	o.Check = func(b []byte) {
		CheckWebhook(t, b)
		if check != nil {
			check(b)
		}
	}
	r := hooks.New(o)
	t.Cleanup(r.Close)
	return r
}

// Status answers every request with code.
func Status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// LoopbackGuard is the destination guard allowing loopback and, when srv
// is not nil, trusting its certificate: the test settings of DESIGN.md
// (OFICINA_ALLOW_PRIVATE_DESTINATIONS, OFICINA_EXTRA_CA_FILE).
func LoopbackGuard(t testing.TB, srv *httptest.Server) *destguard.Guard {
	t.Helper()
	cfg := destguard.Config{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Timeout: 5 * time.Second}
	if srv != nil {
		cfg.ExtraCAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	}
	g, err := destguard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// GuardClient is LoopbackGuard's HTTP client, trusting srv's certificate
// only when trust is set.
func GuardClient(t testing.TB, srv *httptest.Server, trust bool) *http.Client {
	t.Helper()
	if !trust {
		srv = nil
	}
	return LoopbackGuard(t, srv).Client()
}

// Dispatcher runs a dispatcher with test timings until the test ends (or
// the returned cancel). cfg must name JS and Client, and the partitions of
// DELIVERIES when they are not jsconfig's default; DB defaults to the
// test database, Secrets to the tests' key ring, the retry schedule to two
// one-second retries.
func Dispatcher(t testing.TB, cfg dispatch.Config) (*dispatch.Dispatcher, context.CancelFunc) {
	t.Helper()
	if cfg.DB == nil {
		cfg.DB = WorkerDB(t) // the dispatcher is a worker
	}
	if cfg.Secrets == nil {
		cfg.Secrets = Keyring(t)
	}
	if cfg.Schedule == nil {
		cfg.Schedule = []time.Duration{time.Second, time.Second}
	}
	cfg.Jitter = -1
	cfg.LeaseTTL = 1500 * time.Millisecond
	if cfg.AckWait == 0 {
		cfg.AckWait = 3 * time.Second
	}
	if cfg.ParkDelay == 0 {
		cfg.ParkDelay = time.Second
	}
	if cfg.FailingParkSpread == 0 {
		cfg.FailingParkSpread = time.Second
	}
	if cfg.FailingProbeInterval == 0 {
		cfg.FailingProbeInterval = 100 * time.Millisecond
	}
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		cfg.Log = slog.New(slog.NewTextHandler(logWriter{t}, nil))
	}
	d, err := dispatch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return d, cancel
}

type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// DNS answers host names from the map without the network (a
// destguard.Config Resolver): the destination rules of spec 6.5 still
// apply to the addresses.
type DNS map[string][]string

// LookupNetIP answers host's addresses of the network's family.
func (d DNS) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	addrs, ok := d[strings.TrimSuffix(host, ".")]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, s := range addrs {
		a := netip.MustParseAddr(s)
		if network == "ip4" && !a.Is4() || network == "ip6" && a.Is4() {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}
