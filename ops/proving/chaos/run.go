package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"oficina/ops/testkit/hooks"
	"oficina/schema/db"
	"oficina/schema/secretbox"
)

// Config configures a run. The zero value is the short run of `make test`.
type Config struct {
	// Duration of the load; faults fall in its first three quarters, one
	// per 15 s and at least one of each kind. Default 20 s.
	Duration time.Duration
	// Seed of the schedule (which fault when, which process, how long
	// down). 0 picks one from the clock; the report prints it.
	Seed uint64
	// Companies writing at once, each with one endpoint. Default 8.
	Companies int
	// Rate of lead captures per second, all companies together. Default 80.
	Rate float64
	// RecoveryTimeout bounds the wait, once the load stops, for every
	// recorded delivery to arrive and succeed. Default 2 min (the
	// consumers' AckWait is 1 min).
	RecoveryTimeout time.Duration
	// MaxDuplicateRatio is the bar for duplicates (default 0.001), which
	// may only come from a dispatcher's kill -9 (Report.Problems).
	MaxDuplicateRatio float64
	// MaxNATSLatencyRatio, when set, is the bar for write p99 while NATS
	// restarts over steady p99 (the 3); 0 reports it only.
	MaxNATSLatencyRatio float64
	// ModuleDir is where `go build ./cmd/oficina` runs (default: the
	// module of the working directory).
	ModuleDir string
	// PGBinDir holds initdb and postgres (default: the newest
	// /usr/lib/postgresql/*/bin, or pg_config --bindir).
	PGBinDir string
	// FallbackDatabaseURL is an owner URL of a server to use when no
	// private server can be started; the run then creates the database
	// oficina_chaos there (dropping an old one) and skips the PostgreSQL
	// restart, saying so in the report. Empty: such a run fails.
	FallbackDatabaseURL string
	// LogDir keeps the processes' and PostgreSQL's logs (default: a
	// temporary directory removed with the run).
	LogDir string
	// Logf receives progress lines (nil: none).
	Logf func(format string, args ...any)
}

func (c Config) withDefaults() Config {
	if c.Duration <= 0 {
		c.Duration = 20 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.Companies <= 0 {
		c.Companies = 8
	}
	if c.Rate <= 0 {
		c.Rate = 80
	}
	if c.RecoveryTimeout <= 0 {
		c.RecoveryTimeout = 2 * time.Minute
	}
	if c.MaxDuplicateRatio <= 0 {
		c.MaxDuplicateRatio = 0.001
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return c
}

// run is one chaos run: what it started, and what it saw.
type run struct {
	cfg       Config
	rng       *mrand.Rand
	dir       string
	logDir    string
	began     time.Time
	loadStart time.Time

	pg          *postgres // nil when running on the fallback server
	dbURL       string
	nats        *natsServer
	recv        *hooks.Receiver
	bin         string
	apis        []*child
	relay       *child
	dispatchers []*child
	adminBase   []string // per API: http://host:port
	publicBase  []string
	api         *api
	limits      *limitProbe
	closers     []func()
}

func (r *run) logf(format string, args ...any) {
	r.cfg.Logf("%7s  "+format, append([]any{time.Since(r.began).Round(100 * time.Millisecond)}, args...)...)
}

func (r *run) children() []*child {
	return append(append(append([]*child(nil), r.apis...), r.relay), r.dispatchers...)
}

func (r *run) close() {
	var wg sync.WaitGroup
	for _, c := range r.children() {
		if c != nil {
			wg.Go(func() { c.stop(10 * time.Second) })
		}
	}
	wg.Wait()
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// Run starts everything, loads it, injects the faults, waits for the
// deliveries and returns the report; everything it started is stopped and
// removed before it returns, also on error. An error means the run could
// not be made; a run whose promise failed returns a report whose Problems
// say so.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	r := &run{cfg: cfg, rng: mrand.New(mrand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), began: time.Now()}
	defer r.close()
	rep := &Report{Seed: cfg.Seed, Rate: cfg.Rate, Companies: cfg.Companies, MaxDuplicateRatio: cfg.MaxDuplicateRatio,
		MaxNATSLatencyRatio: cfg.MaxNATSLatencyRatio}
	r.logf("seed %d", cfg.Seed)
	if err := r.setUp(ctx, rep); err != nil {
		return nil, err
	}
	if err := r.exercise(ctx, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

func (r *run) setUp(ctx context.Context, rep *Report) error {
	var err error
	if r.dir, err = os.MkdirTemp("", "oficina-chaos-"); err != nil {
		return err
	}
	r.closers = append(r.closers, func() { _ = os.RemoveAll(r.dir) })
	if r.logDir = r.cfg.LogDir; r.logDir == "" {
		r.logDir = r.dir
	} else if err := os.MkdirAll(r.logDir, 0o755); err != nil {
		return err
	}

	// The build is the slow part; the servers start meanwhile.
	built := make(chan error, 1)
	go func() {
		var err error
		r.bin, err = buildBinary(ctx, r.cfg.ModuleDir, r.dir)
		built <- err
	}()
	if err := r.startPostgres(ctx, rep); err != nil {
		<-built
		return err
	}
	if r.nats, err = startNATS(ctx, filepath.Join(r.dir, "nats")); err != nil {
		<-built
		return err
	}
	r.closers = append(r.closers, r.nats.shutdown)
	r.recv = hooks.New(hooks.Options{})
	r.closers = append(r.closers, r.recv.Close)
	caFile := filepath.Join(r.dir, "receiver-ca.pem")
	if err := os.WriteFile(caFile, r.recv.CAPEM(), 0o600); err != nil {
		<-built
		return err
	}
	if err := <-built; err != nil {
		return err
	}
	r.logf("built %s; PostgreSQL %s; NATS %s; receiver %s", r.bin, r.dbURL, r.nats.url(), r.recv.URL())

	var raw [16]byte
	_, _ = rand.Read(raw[:])
	r.api = &api{adminToken: hex.EncodeToString(raw[:]),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	secretKey, err := secretbox.NewKey(rand.Reader)
	if err != nil {
		return err
	}
	env := []string{"DATABASE_URL=" + r.dbURL, "NATS_URL=" + r.nats.url(), "OFICINA_ADMIN_TOKEN=" + r.api.adminToken,
		"OFICINA_SECRET_KEYS=chaos:" + secretKey,
		"OFICINA_ALLOW_PRIVATE_DESTINATIONS=127.0.0.1/32", "OFICINA_EXTRA_CA_FILE=" + caFile,
		"OFICINA_LOG_LEVEL=warn", "OFICINA_DB_MAX_CONNS=16", "OFICINA_SHUTDOWN_TIMEOUT=5s", "OFICINA_APP_DB_PASSWORD="}
	if err := runOnce(ctx, r.bin, env, "migrate"); err != nil {
		return err
	}
	for i := range 2 {
		pub, err := freePort()
		if err != nil {
			return err
		}
		adm, err := freePort()
		if err != nil {
			return err
		}
		name := "api-" + strconv.Itoa(i+1)
		c := newChild(name, r.bin, []string{"serve"}, slices.Concat(env, []string{"OFICINA_DATA_DIR=" + filepath.Join(r.dir, name),
			"OFICINA_HTTP_ADDR=127.0.0.1:" + strconv.Itoa(pub), "OFICINA_ADMIN_ADDR=127.0.0.1:" + strconv.Itoa(adm)}), r.logDir)
		r.adminBase = append(r.adminBase, "http://127.0.0.1:"+strconv.Itoa(adm))
		r.publicBase = append(r.publicBase, "http://127.0.0.1:"+strconv.Itoa(pub))
		c.readyz = r.adminBase[i] + "/readyz"
		r.apis = append(r.apis, c)
	}
	r.relay = newChild("relay", r.bin, []string{"relay"}, slices.Concat(env, []string{"OFICINA_DATA_DIR=" + filepath.Join(r.dir, "relay")}), r.logDir)
	for i := range 2 {
		name := "dispatch-" + strconv.Itoa(i+1)
		r.dispatchers = append(r.dispatchers, newChild(name, r.bin, []string{"dispatch"},
			slices.Concat(env, []string{"OFICINA_DATA_DIR=" + filepath.Join(r.dir, name)}), r.logDir))
	}
	for _, c := range r.children() {
		if err := c.start(); err != nil {
			return err
		}
	}
	for _, c := range r.apis {
		if err := c.waitReady(ctx); err != nil {
			return err
		}
	}
	r.logf("2 API processes, a relay and 2 dispatchers running")

	cos := make([]company, r.cfg.Companies)
	for i := range cos {
		if cos[i], err = r.api.newCompany(ctx, r.adminBase[0], r.publicBase[i%2], r.recv, i, loadCeiling, i%2 == 1); err != nil {
			return fmt.Errorf("company %d: %w", i, err)
		}
	}
	rep.companies = cos
	for _, co := range cos {
		if co.ordered {
			rep.OrderedEndpoints++
		}
	}
	limited, err := r.api.newCompany(ctx, r.adminBase[0], r.publicBase[0], nil, len(cos), limitedCeiling, false)
	if err != nil {
		return fmt.Errorf("limited company: %w", err)
	}
	// Started now, so its budget is full before the first fault.
	r.limits = startLimitProbe(ctx, r.api, r.publicBase, limited)
	r.closers = append(r.closers, func() { r.limits.stop() })
	rep.extraWrites = len(cos) // the warm-up below
	// Warm-up: the pipeline delivers before the first fault.
	for i, co := range cos {
		if status, body, err := r.api.captureLead(ctx, r.publicBase[i%2], co, -1); err != nil || status != http.StatusCreated {
			return fmt.Errorf("warm-up lead: %d %s %v", status, body, err)
		}
	}
	if _, done, err := r.waitDelivered(ctx, time.Minute); err != nil || !done {
		return fmt.Errorf("warm-up: deliveries did not arrive within a minute (%v); logs: %s", err, r.tails())
	}
	r.logf("%d companies, each with an endpoint; warm-up deliveries arrived", len(cos))
	return nil
}

// startPostgres starts the run's own server, or falls back to
// FallbackDatabaseURL (no restart fault then).
func (r *run) startPostgres(ctx context.Context, rep *Report) error {
	logPath := ""
	if r.cfg.LogDir != "" {
		logPath = filepath.Join(r.logDir, "postgres.log")
	}
	pg, err := startPostgres(ctx, r.cfg.PGBinDir, logPath)
	if err == nil {
		r.pg = pg
		r.closers = append(r.closers, pg.close)
		r.dbURL = pg.URL("oficina")
		return nil
	}
	if r.cfg.FallbackDatabaseURL == "" {
		return fmt.Errorf("private PostgreSQL: %w", err)
	}
	rep.PostgresSkipped = "no private PostgreSQL server (" + err.Error() + "): ran on the shared server, which is not restarted"
	r.logf("%s", rep.PostgresSkipped)
	r.dbURL, err = db.Recreate(ctx, r.cfg.FallbackDatabaseURL, "oficina_chaos")
	return err
}

// exercise runs the load and the faults, then waits for the deliveries
// and fills the report.
func (r *run) exercise(ctx context.Context, rep *Report) error {
	kinds := []string{FaultAPI, FaultRelay, FaultDispatcher, FaultNATS, FaultPostgres}
	if r.pg == nil {
		kinds = kinds[:4]
	}
	plan := planFaults(r.rng, r.cfg.Duration, kinds)
	r.loadStart = time.Now()
	ld := startLoad(ctx, r.api, r.publicBase, rep.companies, r.cfg.Rate)
	r.logf("load: %.0f lead captures/s over %d companies and both APIs, %v; %d faults planned", r.cfg.Rate,
		len(rep.companies), r.cfg.Duration, len(plan))
	for _, pf := range plan {
		// Faults do not overlap, and each part gets 3 s to settle after
		// the last one (a dispatcher restarted as NATS goes down would
		// hide what NATS's restart does to the others).
		at := r.loadStart.Add(pf.at)
		if n := len(rep.Faults); n > 0 {
			at = later(at, r.loadStart.Add(rep.Faults[n-1].Up+3*time.Second))
		}
		sleep(ctx, time.Until(at))
		rep.Faults = append(rep.Faults, r.inject(ctx, pf))
	}
	lastUp := rep.Faults[len(rep.Faults)-1].Up
	sleep(ctx, time.Until(r.loadStart.Add(max(r.cfg.Duration, lastUp+3*time.Second))))
	rep.Writes = ld.stop()
	rep.Load = time.Since(r.loadStart)
	rep.Limits = limitFigures(r.limits.stop(), rep.Faults, r.loadStart)
	rep.Latency = latencyFigures(rep.Writes.Latencies, rep.Faults, r.loadStart)
	loadStop := time.Now()
	r.logf("load stopped: %d writes attempted, %d committed", rep.Writes.Attempted, rep.Writes.Committed)
	if err := ctx.Err(); err != nil {
		return err
	}

	// After the faults each API takes a write again, and its deliveries
	// must arrive like the others.
	for i, base := range r.publicBase {
		for _, co := range rep.companies {
			status, body, err := r.api.captureLead(ctx, base, co, -2-i)
			if err != nil || status != http.StatusCreated {
				rep.Probes = append(rep.Probes, fmt.Sprintf("%s refused a write after the faults: %d %s %v", r.apis[i].name, status, body, err))
				continue
			}
			rep.extraWrites++
		}
	}
	rows, done, err := r.waitDelivered(ctx, r.cfg.RecoveryTimeout)
	if err != nil {
		return err
	}
	rep.Recovered = done
	rep.Drain = time.Since(loadStop)
	r.logf("deliveries %s after the load stopped", map[bool]string{true: "complete", false: "INCOMPLETE"}[done])
	for _, c := range r.children() {
		if !c.running() {
			rep.Down = append(rep.Down, c.name+" not running at the end")
		} else if err := c.waitReady(ctx); err != nil {
			rep.Down = append(rep.Down, err.Error())
		}
		rep.Exits = append(rep.Exits, c.unexpectedExits(r.loadStart)...)
	}
	rep.tally(rows, observe(r.recv), r.loadStart)
	if len(rep.Lost) > 0 || rep.NotSucceeded > 0 {
		rep.Notes = append(rep.Notes, r.diagnose(ctx)...)
		rep.Notes = append(rep.Notes, "process logs: "+r.tails())
	}
	return nil
}

// waitDelivered polls until every recorded delivery has arrived and is
// succeeded, or timeout passes; it returns the last rows read.
func (r *run) waitDelivered(ctx context.Context, timeout time.Duration) ([]deliveryRow, bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		rows, err := readDeliveries(ctx, r.dbURL)
		if err == nil && complete(rows, r.recv) {
			return rows, true, nil
		}
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		if time.Now().After(deadline) {
			if err != nil {
				return nil, false, err
			}
			return rows, false, nil
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

func complete(rows []deliveryRow, recv *hooks.Receiver) bool {
	for _, d := range rows {
		if _, ok := recv.Delivery(deliveryKey(d.company, d.event)); !ok || d.status != "succeeded" {
			return false
		}
	}
	return true
}

// tails are the last lines of every process's log.
func (r *run) tails() string {
	var s string
	for _, c := range r.children() {
		s += fmt.Sprintf("\n  %s: %s", c.name, c.tail(8))
	}
	if r.pg != nil {
		s += "\n  postgres: " + r.pg.logTail(5)
	}
	return s
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
