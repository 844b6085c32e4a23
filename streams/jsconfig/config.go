package jsconfig

import (
	"errors"
	"fmt"
	"time"
)

// Config sizes the streams. Zero fields take DefaultConfig's values.
type Config struct {
	// Replicas of each stream: 1 for dev and single-node, 3 in a cluster.
	Replicas int
	// Partitions of DELIVERIES. Each partition has one durable consumer, so
	// this bounds how many dispatchers can share the work. Changing it
	// re-maps companies to partitions for new messages only: messages
	// already stored stay on their old partition subjects until consumed.
	Partitions int
	// EventsMaxAge is how long EVENTS keeps an event (spec: 30 days).
	EventsMaxAge time.Duration
	// DeliveriesMaxAge is how long DELIVERIES keeps an unconsumed delivery
	// or a pending retry schedule. It must exceed the longest retry delay
	// (~3 days), or a schedule expires before it fires and the retry is lost.
	DeliveriesMaxAge time.Duration
	// DuplicateWindow is how long a Nats-Msg-Id is remembered for dedup of
	// re-published outbox rows (crash between commit and publish, relays).
	DuplicateWindow time.Duration
}

// DefaultConfig is the single-node default.
func DefaultConfig() Config {
	return Config{
		Replicas:         1,
		Partitions:       16,
		EventsMaxAge:     30 * 24 * time.Hour,
		DeliveriesMaxAge: 4 * 24 * time.Hour,
		DuplicateWindow:  2 * time.Minute,
	}
}

// withDefaults fills zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Replicas == 0 {
		c.Replicas = d.Replicas
	}
	if c.Partitions == 0 {
		c.Partitions = d.Partitions
	}
	if c.EventsMaxAge == 0 {
		c.EventsMaxAge = d.EventsMaxAge
	}
	if c.DeliveriesMaxAge == 0 {
		c.DeliveriesMaxAge = d.DeliveriesMaxAge
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = d.DuplicateWindow
	}
	return c
}

// maxReplicas is JetStream's limit.
const maxReplicas = 5

func (c Config) validate() error {
	var errs []error
	if c.Replicas < 1 || c.Replicas > maxReplicas {
		errs = append(errs, fmt.Errorf("replicas %d not in 1..%d", c.Replicas, maxReplicas))
	}
	if c.Partitions < 1 {
		errs = append(errs, fmt.Errorf("partitions %d < 1", c.Partitions))
	}
	if c.DuplicateWindow < 0 || c.EventsMaxAge < 0 || c.DeliveriesMaxAge < 0 {
		errs = append(errs, errors.New("durations must not be negative"))
	}
	// The server rejects a duplicate window longer than MaxAge; say which.
	if c.DuplicateWindow > c.EventsMaxAge || c.DuplicateWindow > c.DeliveriesMaxAge {
		errs = append(errs, fmt.Errorf("duplicate window %v exceeds a stream max age", c.DuplicateWindow))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("jsconfig: invalid config: %w", err)
	}
	return nil
}
