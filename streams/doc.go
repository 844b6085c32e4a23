// Package streams records the events of a write inside the write's own
// transaction (the outbox), so an event exists exactly when its write
// committed. Domain code calls Record; publishing to JetStream after commit,
// the relay and webhook delivery rows build on what it stores.
package streams
