package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/dispatch/destguard"
	"oficina/ops/metrics"
	"oficina/ops/natsauth"
	"oficina/schema/secretbox"
	"oficina/schema/service"
	"oficina/streams/jsconfig"
)

// startDispatch runs one webhook dispatcher in this process (oficina dev)
// until ctx ends; without NATS there is nothing to dispatch. Errors only
// log: the API keeps serving, and deliveries wait in DELIVERIES.
func (s *Stack) startDispatch(ctx context.Context) {
	if !s.opts.Embedded || s.nc == nil || s.events == nil {
		return // serve: dispatchers run as `oficina dispatch`
	}
	nc := s.nc
	if s.dispatchNATS != nil {
		var err error
		if s.dispatchNC, err = s.connectNATS(s.natsURL, *s.dispatchNATS, natsauth.Dispatch); err != nil {
			s.log.Error("dispatcher not started", "err", err)
			return
		}
		nc = s.dispatchNC
	}
	d, err := newDispatcher(nc, s.workers, s.events.guard, s.secrets, s.opts.Config.StreamReplicas, s.log, s.metrics.Dispatch())
	if err != nil {
		s.log.Error("dispatcher not started", "err", err)
		return
	}
	s.metrics.WatchDispatcher(d, s.workers)
	dctx, cancel := context.WithCancel(ctx)
	s.dispatchDone, s.stopDispatch = make(chan struct{}), cancel
	go func() {
		defer close(s.dispatchDone)
		if err := d.Run(dctx); err != nil {
			s.log.Error("dispatcher stopped", "err", err)
		}
	}()
}

func newDispatcher(nc *nats.Conn, bdb *bun.DB, guard *destguard.Guard, ring *secretbox.Keyring, replicas int, log *slog.Logger, obs dispatch.Observer) (*dispatch.Dispatcher, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("stack: jetstream: %w", err)
	}
	return dispatch.New(dispatch.Config{DB: bdb, JS: js, Client: guard.Client(), CertifiedClient: guard.ClientWithCertificate, Secrets: ring, Base: service.Base{Log: log}, Observer: obs,
		Partitions: jsconfig.DefaultConfig().Partitions, LeaseReplicas: replicas})
}

// RunDispatch is `oficina dispatch`: a webhook dispatcher until ctx ends.
// Any number may run; they share the DELIVERIES partitions by themselves
// (docs/dispatch.md).
func RunDispatch(ctx context.Context, o Options) error {
	if o.Config.NATSURL == "" {
		return errors.New("stack: dispatch needs NATS_URL")
	}
	s := newStack(o)
	cfg := o.Config
	ring, err := secretKeys(cfg, false, io.Discard)
	if err != nil {
		return err
	}
	bdb, err := openWorkers(ctx, cfg, max(cfg.DBMaxConns, 8))
	if err != nil {
		return err
	}
	defer bdb.Close()
	if err := sealUnsealed(ctx, bdb, ring, o.Only, s.log); err != nil {
		return err
	}
	nc, err := s.connectNATS(cfg.NATSURL, cfg.NATS, natsauth.Dispatch)
	if err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("stack: jetstream: %w", err)
	}
	// Its user may read DELIVERIES, not create or change it: serve does.
	if err := s.awaitStreams(ctx, js, jsconfig.DeliveriesStream); err != nil {
		return fmt.Errorf("stack: streams: %w", err)
	}
	guard, err := destinationGuard(cfg)
	if err != nil {
		return err
	}
	m := metrics.New()
	d, err := newDispatcher(nc, bdb, guard, ring, cfg.StreamReplicas, s.log, m.Dispatch())
	if err != nil {
		return err
	}
	m.WatchDispatcher(d, bdb)
	m.WatchPool("worker", bdb.DB)
	ml, err := startMetrics(cfg, m, cfg.AdminToken, s.log)
	if err != nil {
		return err
	}
	defer ml.stop()
	if o.Ready != nil {
		o.Ready(Addrs{NATS: cfg.NATSURL, Metrics: ml.addr()})
	}
	return d.Run(ctx)
}
