// Package jsconfig declares Oficina's JetStream streams and subjects and
// creates or updates them at start (Ensure).
//
// Two streams:
//
//   - EVENTS: the firehose, one message per event on
//     oficina.events.<company_id>.<event type> (event types contain dots,
//     e.g. oficina.events.co_123.sale.paid). Limits retention, 30 days.
//
//   - DELIVERIES: one message per webhook delivery. Producers publish to
//     oficina.deliveries.<company_id>.<endpoint_id>; the stream's subject
//     transform stores it as oficina.dlv.<partition>.<company_id>.<endpoint_id>,
//     the partition being a hash of the company id, so all of one company's
//     deliveries share a partition and one durable consumer per partition
//     (filter PartitionFilter(p)) sees them in order. Retries and parked
//     backlog are JetStream message schedules stored on
//     oficina.dlvsched.<company_id>.<endpoint_id>.<delivery_id>; at the due
//     time the server republishes them to the delivery subject, and the same
//     transform puts them back on the company's partition (see RetryMsg).
//
// Every id used as a subject token is validated (ValidToken): a stray "."
// would silently shift tokens and route a message to another company's
// partition or consumer filter.
package jsconfig
