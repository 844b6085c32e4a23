package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/dispatch/destguard"
	"oficina/dispatch/recovery"
	"oficina/ops/config"
	"oficina/ops/mail"
	"oficina/ops/metrics"
	"oficina/ops/natsauth"
	"oficina/ops/sweep"
	"oficina/schema/service"
	"oficina/streams"
	"oficina/streams/jsconfig"
)

// eventParts are a process's event machinery: the publisher the API calls
// after each commit, the webhook URL guard, and the background workers
// (relay, recovery of failed deliveries, retention sweep of events and
// mail, mail sender), which stop with stop().
type eventParts struct {
	pub         *streams.Publisher // nil without NATS
	recoveryPub *streams.Publisher // the recovery worker's (the worker pool)
	guard       *destguard.Guard
	cancel      context.CancelFunc
	wg          sync.WaitGroup
}

// startEvents creates or updates the JetStream streams (replicas from the
// config), builds the publisher and starts the workers. Without NATS only
// the sweeper and the mail sender run; events then stay in the outbox until
// a relay with NATS publishes them.
//
// owner is serve's (and dev's) part: it creates and updates the streams.
// A relay only waits for them: its NATS user may not change them.
func (s *Stack) startEvents(ctx context.Context, cfg config.Config, owner bool) (*eventParts, error) {
	guard, err := destinationGuard(cfg)
	if err != nil {
		return nil, err
	}
	e := &eventParts{guard: guard}
	var js jetstream.JetStream
	if s.nc != nil {
		if js, err = jetstream.New(s.nc, jetstream.WithPublishAsyncMaxPending(streams.PublishAsyncMaxPending)); err != nil {
			return nil, fmt.Errorf("stack: jetstream: %w", err)
		}
		if owner {
			err = jsconfig.Ensure(ctx, js, jsconfig.Config{Replicas: cfg.StreamReplicas})
		} else {
			err = s.awaitStreams(ctx, js, jsconfig.EventsStream, jsconfig.DeliveriesStream)
		}
		if err != nil {
			return nil, fmt.Errorf("stack: streams: %w", err)
		}
		e.pub = streams.NewPublisher(s.db, js, s.log)
		if owner { // the API's: a relay process publishes nothing after a commit
			e.pub.Failed = s.metrics.PublishFailed()
		}
	} else {
		s.log.Warn("no NATS: events stay in the outbox until a relay publishes them")
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.cancel = cancel
	var transport mail.Transport = mail.LogTransport{Log: s.log}
	if cfg.SMTPAddr != "" {
		transport = mail.SMTP{Addr: cfg.SMTPAddr, Username: cfg.SMTPUsername, Password: cfg.SMTPPassword, From: cfg.MailFrom}
	}
	// The outbox and the mail outbox are read at scrape time whether or
	// not a relay runs here: without NATS is when the outbox grows.
	s.metrics.WatchOutbox(s.workers)
	s.metrics.WatchMail(s.workers)
	only := s.opts.Only
	workers := []func(context.Context) error{(&mail.Sender{Base: service.Base{Log: s.log}, DB: s.workers, Transport: transport, Only: only}).Run}
	if len(only) == 0 {
		workers = append(workers, (&sweep.Runner{Base: service.Base{Log: s.log}, Tasks: []sweep.Task{sweep.Log(s.workers, cfg.EventRetention), sweep.Mail(s.workers, cfg.EventRetention)}, Interval: 10 * time.Minute}).Run)
	}
	if js != nil {
		e.recoveryPub = streams.NewPublisher(s.workers, js, s.log)
		// The publishers' heartbeats: they vouch for the writes they
		// publish, so those cost no database write (decision 0029).
		workers = append(workers, e.pub.Run, e.recoveryPub.Run,
			(&streams.Relay{Base: service.Base{Log: s.log}, DB: s.workers, JS: js, Only: only, Ran: s.metrics.RelayRan()}).Run,
			(&recovery.Runner{Base: service.Base{Log: s.log}, DB: s.workers, Publisher: e.recoveryPub, Only: only}).Run)
	}
	for _, run := range workers {
		e.wg.Go(func() { _ = run(wctx) })
	}
	return e, nil
}

// publisher is the API's publisher hook (a nil interface without NATS).
func (e *eventParts) publisher() streams.AfterCommitter {
	if e == nil || e.pub == nil {
		return nil
	}
	return e.pub
}

// destinations is the webhook URL guard (nil: the API's default).
func (e *eventParts) destinations() *destguard.Guard {
	if e == nil {
		return nil
	}
	return e.guard
}

// stop ends the workers and waits for them.
func (e *eventParts) stop() {
	if e == nil {
		return
	}
	e.cancel()
	e.wg.Wait()
	// Publishes still awaiting their acknowledgement finish (or go to
	// the backlog) before the pools close under them.
	for _, p := range []*streams.Publisher{e.pub, e.recoveryPub} {
		if p != nil {
			p.Wait()
		}
	}
}

// destinationGuard builds the webhook URL guard; private prefixes are
// allowed only through OFICINA_ALLOW_PRIVATE_DESTINATIONS.
func destinationGuard(cfg config.Config) (*destguard.Guard, error) {
	allow, err := config.Prefixes("OFICINA_ALLOW_PRIVATE_DESTINATIONS", cfg.AllowPrivateDestinations)
	if err != nil {
		return nil, err
	}
	var ca []byte
	if cfg.ExtraCAFile != "" {
		b, err := os.ReadFile(cfg.ExtraCAFile)
		if err != nil {
			return nil, fmt.Errorf("stack: OFICINA_EXTRA_CA_FILE: %w", err)
		}
		ca = b
	}
	g, err := destguard.New(destguard.Config{AllowPrivate: allow, ExtraCAPEM: ca})
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	return g, nil
}

// RunRelay is `oficina relay`: the relay that republishes what crashes
// left unpublished, with the retention sweeper and the mail sender, until
// ctx ends. Any number may run.
func RunRelay(ctx context.Context, o Options) error {
	if o.Config.NATSURL == "" {
		return errors.New("stack: relay needs NATS_URL")
	}
	s := newStack(o)
	s.metrics = metrics.New()
	defer s.close()
	// A relay process has no requests: everything it does is a worker's.
	var err error
	if s.workers, err = openWorkers(ctx, o.Config, 8); err != nil {
		return err
	}
	s.db = s.workers
	s.metrics.WatchPool("worker", s.workers.DB)
	if s.nc, err = s.connectNATS(o.Config.NATSURL, o.Config.NATS, natsauth.Relay); err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	if s.events, err = s.startEvents(ctx, o.Config, false); err != nil {
		return err
	}
	if s.metricsAddr, err = startMetrics(o.Config, s.metrics, o.Config.AdminToken, s.log); err != nil {
		return err
	}
	s.log.Info("relay running")
	if o.Ready != nil {
		o.Ready(Addrs{NATS: o.Config.NATSURL, Metrics: s.metricsAddr.addr()})
	}
	<-ctx.Done()
	return nil
}
