package chaos_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"oficina/ops/proving/chaos"
	"oficina/ops/testkit"
)

// Issue 9, faults: under a steady load of writes that create webhook
// deliveries, kill -9 an API process, the relay and one of two
// dispatchers, restart NATS and restart PostgreSQL; afterwards every
// delivery PostgreSQL recorded has reached the receiver with its original
// webhook-id and is `succeeded`; a delivery is received twice only when
// its first send was around a kill -9 of a dispatcher, and such duplicates
// stay below 0.1 % (1 % in the short run, see below). Issue 15 item 6: a company's rate ceiling
// holds throughout (0 requests over it, NATS restart included) and every
// answer through the limit carries its RateLimit headers; writes while
// NATS restarts answer within 3× of steady running at p99 (long runs).
//
// By default one fault of each kind in 20 s of load (make test);
// CHAOS_DURATION=3m runs the long schedule (make chaos), CHAOS_SEED
// replays a schedule, CHAOS_RATE sets the lead captures per second and
// CHAOS_MODULE_DIR builds the binary from another checkout (a fix under
// trial); CHAOS_LOG_DIR keeps the processes' logs.
func TestChaosNothingLost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, NATS and five processes: not in -short")
	}
	cfg := chaos.Config{Logf: t.Logf, FallbackDatabaseURL: testkit.OwnerURL(), ModuleDir: os.Getenv("CHAOS_MODULE_DIR"),
		LogDir: os.Getenv("CHAOS_LOG_DIR")}
	var err error
	if v := os.Getenv("CHAOS_DURATION"); v != "" {
		if cfg.Duration, err = time.ParseDuration(v); err != nil {
			t.Fatalf("CHAOS_DURATION: %v", err)
		}
	}
	if v := os.Getenv("CHAOS_SEED"); v != "" {
		if cfg.Seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("CHAOS_SEED: %v", err)
		}
	}
	if v := os.Getenv("CHAOS_RATE"); v != "" {
		if cfg.Rate, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatalf("CHAOS_RATE: %v", err)
		}
	}
	// A kill -9 of a dispatcher repeats the sends it had in flight (about
	// one at this load): by construction, not a bug. The short run records
	// ~1,500 deliveries, too few to resolve 0.1 %, so it holds duplicates
	// to 1 % — still far below what a systematic repeat produces (a
	// PostgreSQL crash re-sending a whole record batch: 2.5 %); runs of a
	// minute and more hold the 0.1 %.
	if cfg.Duration < time.Minute {
		cfg.MaxDuplicateRatio = 0.01
	} else {
		// Issue 15 item 6: writes while NATS restarts answer within 3× of
		// steady running at p99. The short run only reports it: its few
		// hundred samples on a shared machine make p99 a single write.
		cfg.MaxNATSLatencyRatio = 3
	}
	rep, err := chaos.Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("chaos run: %v", err)
	}
	t.Logf("\n%s", rep)
	for _, p := range rep.Problems() {
		t.Error(p)
	}
}
