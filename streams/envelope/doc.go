// Package envelope defines the event envelope: the one JSON document that is
// both the message published on the EVENTS JetStream stream and the body of
// every webhook delivery of that event (spec 6.2). Keeping a single encoder for
// both means an internal consumer and a webhook receiver see the same bytes,
// and the signature covers exactly what was recorded.
//
// The package also owns the two rules that shape the body: changed_fields
// (spec 6.3 rules 1-3) and the 256 KB cap with its summarized form (rules 4-5,
// part 8). It does no I/O; recording, publishing and delivering live elsewhere.
package envelope
