// Package streams records the events of a write inside the write's own
// transaction (the outbox), so an event exists exactly when its write
// committed, together with one delivery row per enabled webhook endpoint
// subscribed to its type at that moment. After commit a Publisher sends the
// events to JetStream's EVENTS firehose and the deliveries to DELIVERIES
// (Nats-Msg-Id = event / delivery id, so republishing is harmless); a Relay
// republishes what a crash left unpublished; KeepLog keeps the log's day
// partitions and drops those past the 30-day retention (run by ops/sweep);
// Tail follows a company's events. Domain
// code calls Record; docs/events.md describes subjects, envelope and
// message formats.
package streams
