package jsconfig

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Ensure creates EVENTS and DELIVERIES or updates them to cfg. It is
// idempotent and may run in several processes at once (each API, relay and
// dispatcher calls it at start). Zero fields of cfg take DefaultConfig's.
//
// Some changes the server refuses on update (storage, retention to or from
// work-queue, turning schedules off); those come back as errors rather than
// being forced, since forcing means deleting the stream. Denying delete and
// purge is applied to existing streams by the same update.
func Ensure(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	for _, sc := range []jetstream.StreamConfig{eventsStream(cfg), deliveriesStream(cfg)} {
		if err := ensureStream(ctx, js, sc); err != nil {
			return err
		}
	}
	return nil
}

// ensureStream updates sc, or creates it when absent. Concurrent callers can
// interleave (A sees not-found, B creates, A's create then finds it): a few
// rounds of update-then-create settle that.
func ensureStream(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig) error {
	const rounds = 3
	var err error
	for range rounds {
		if _, err = js.UpdateStream(ctx, sc); err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("jsconfig: update stream %s: %w", sc.Name, err)
		}
		if _, err = js.CreateStream(ctx, sc); err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("jsconfig: create stream %s: %w", sc.Name, err)
		}
	}
	return fmt.Errorf("jsconfig: stream %s: still racing after %d rounds: %w", sc.Name, rounds, err)
}

func eventsStream(cfg Config) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        EventsStream,
		Description: "Oficina events firehose: oficina.events.<company_id>.<event type>",
		Subjects:    []string{eventsPrefix + ".>"},
		// Limits: events are read by any number of internal consumers and
		// replayed; they leave by age only.
		Retention:  jetstream.LimitsPolicy,
		Discard:    jetstream.DiscardOld,
		MaxAge:     cfg.EventsMaxAge,
		Duplicates: cfg.DuplicateWindow,
		Replicas:   cfg.Replicas,
		Storage:    jetstream.FileStorage,
		// Nobody erases history: no message delete, no purge, whatever a
		// user's permissions (the server refuses both on this stream, and
		// an update can never turn them back on).
		DenyDelete: true,
		DenyPurge:  true,
	}
}

func deliveriesStream(cfg Config) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        DeliveriesStream,
		Description: "Oficina webhook deliveries, partitioned by company, with scheduled retries",
		Subjects: []string{
			deliveriesPrefix + ".*.*", // <company>.<endpoint>: producers and fired schedules
			schedulePrefix + ".*.*.*", // <company>.<endpoint>.<delivery>: pending schedules
		},
		// Only the delivery subjects are transformed; schedules keep their
		// subject, so no partition consumer (oficina.dlv.<p>.>) sees them.
		// The transform also applies to a schedule's message when it fires
		// at its target, which is what brings a retry back to its partition.
		SubjectTransform: &jetstream.SubjectTransformConfig{
			Source:      deliveriesPrefix + ".*.*",
			Destination: fmt.Sprintf("%s.{{partition(%d,1)}}.{{wildcard(1)}}.{{wildcard(2)}}", partitionPrefix, cfg.Partitions),
		},
		// Work-queue: a delivery is removed once its partition's consumer
		// acks it (sent, or handed to a schedule), so the stream holds only
		// outstanding work and its size is the backlog. It fits the design:
		// exactly one durable consumer per partition with disjoint filters
		// oficina.dlv.<p>.>, which the server enforces (an overlapping
		// consumer is refused). Schedules on oficina.dlvsched match no
		// consumer and stay until they fire (the server then purges them) or
		// expire by MaxAge. Limits retention would keep every sent delivery
		// for MaxAge for nothing: the delivery log lives in Postgres.
		// Cost: no extra ad-hoc consumer may overlap a partition filter;
		// inspect with direct get / stream view instead.
		Retention: jetstream.WorkQueuePolicy,
		// Message schedules refuse DiscardNew and need roll-ups (the server
		// rolls up each schedule subject); state both so the stored config
		// equals ours.
		Discard:           jetstream.DiscardOld,
		AllowMsgSchedules: true,
		AllowRollup:       true,
		// No message delete: nothing in Oficina deletes a delivery by
		// sequence (acks remove them; fired schedules are removed by the
		// server). Purge cannot be denied here: the server refuses
		// DenyPurge with roll-ups, which schedules need; no NATS user but
		// the operator's may call the purge API (ops/natsauth).
		DenyDelete: true,
		MaxAge:     cfg.DeliveriesMaxAge,
		Duplicates: cfg.DuplicateWindow,
		Replicas:   cfg.Replicas,
		Storage:    jetstream.FileStorage,
	}
}
