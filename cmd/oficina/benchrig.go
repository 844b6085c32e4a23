package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/config"
	"oficina/ops/migrate"
	"oficina/ops/natsconn"
	"oficina/ops/proving/bench"
	"oficina/schema/db"
	"oficina/schema/secretbox"
	"oficina/streams"
)

// benchRig is what the scenarios stand on.
type benchRig struct {
	env      *bench.Env
	feed     *bench.Feed
	api      *bench.Proc
	dispatch *bench.Proc
	// pprof are the processes' metrics listeners serving /debug/pprof/,
	// by process name; empty unless profiled.
	pprof   map[string]string
	closers []func()
}

func (r *benchRig) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// startBenchRig recreates dbName, starts a local HTTPS receiver, the API
// and a dispatcher (each its own process, on natsURL) and connects the
// feed that offers deliveries in bulk. With profile, each process serves
// its Go profiles on a metrics listener of its own (r.pprof).
func startBenchRig(ctx context.Context, cfg config.Config, dbName, natsURL string, identity config.NATS, dataDir string, profile bool, stderr io.Writer) (_ *benchRig, err error) {
	r := &benchRig{pprof: map[string]string{}}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	dbURL, err := db.Recreate(ctx, cfg.DatabaseURL, dbName)
	if err != nil {
		return nil, err
	}
	if _, err := migrate.Run(ctx, dbURL); err != nil {
		return nil, err
	}
	if profile {
		// The rig's sessions track their PL/pgSQL functions, for the
		// profiles' PostgreSQL side (bench.Profiler.DB).
		if err := trackFunctions(ctx, dbURL, dbName); err != nil {
			return nil, err
		}
	}
	recv := bench.NewReceiver()
	r.closers = append(r.closers, recv.Close)
	caFile := filepath.Join(dataDir, "receiver-ca.pem")
	if err := os.WriteFile(caFile, recv.CAPEM(), 0o600); err != nil {
		return nil, err
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	token := hex.EncodeToString(raw[:])
	secretKey, err := secretbox.NewKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	public, err := bench.FreeAddr()
	if err != nil {
		return nil, err
	}
	admin, err := bench.FreeAddr()
	if err != nil {
		return nil, err
	}
	// The receiver is trusted and allowed for this run only.
	env := []string{"DATABASE_URL=" + dbURL, "NATS_URL=" + natsURL, "OFICINA_DATA_DIR=" + dataDir,
		"OFICINA_HTTP_ADDR=" + public, "OFICINA_ADMIN_ADDR=" + admin, "OFICINA_ADMIN_TOKEN=" + token,
		"OFICINA_SECRET_KEYS=bench:" + secretKey,
		"OFICINA_ALLOW_PRIVATE_DESTINATIONS=127.0.0.1/32", "OFICINA_EXTRA_CA_FILE=" + caFile,
		"OFICINA_LOG_LEVEL=warn"} // request logs off: the figures measure the API, not stderr
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	procEnv := func(name string) ([]string, error) {
		if !profile {
			return env, nil
		}
		addr, err := bench.FreeAddr()
		if err != nil {
			return nil, err
		}
		r.pprof[name] = addr
		return append(slices.Clone(env), "OFICINA_METRICS_ADDR="+addr, "OFICINA_PPROF=true"), nil
	}
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	apiEnv, err := procEnv("api")
	if err != nil {
		return nil, err
	}
	if r.api, err = bench.StartProc("api", bin, []string{"serve"}, apiEnv, stderr); err != nil {
		return nil, err
	}
	r.closers = append(r.closers, func() { r.api.Stop(10 * time.Second) })
	if err := r.api.WaitReady(wait, "http://"+admin+"/readyz"); err != nil {
		return nil, err
	}
	dspEnv, err := procEnv("dispatch")
	if err != nil {
		return nil, err
	}
	if r.dispatch, err = bench.StartProc("dispatch", bin, []string{"dispatch"}, dspEnv, stderr); err != nil {
		return nil, err
	}
	r.closers = append(r.closers, func() { r.dispatch.Stop(10 * time.Second) })

	owner, err := db.Open(ctx, dbURL, db.Options{})
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, func() { owner.Close() })
	nc, err := natsconn.Connect(natsURL, identity, "bench", nil)
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, nc.Close)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(streams.PublishAsyncMaxPending))
	if err != nil {
		return nil, err
	}
	r.feed = &bench.Feed{DB: owner, JS: js, Recv: recv}
	r.env = &bench.Env{BaseURL: "http://" + public, AdminURL: "http://" + admin, AdminToken: token,
		Client:  &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}},
		HookURL: recv.URL() + "/hook"}
	return r, nil
}

// trackFunctions has the sessions of dbName (at dbURL) count their
// PL/pgSQL functions' calls and time (pg_stat_user_functions).
func trackFunctions(ctx context.Context, dbURL, dbName string) error {
	owner, err := db.Open(ctx, dbURL, db.Options{})
	if err != nil {
		return err
	}
	defer owner.Close()
	_, err = owner.ExecContext(ctx, "ALTER DATABASE "+pgx.Identifier{dbName}.Sanitize()+" SET track_functions = 'pl'")
	return err
}
