// Package chaos proves the delivery promise of issue 9 under faults: with a
// steady load of writes that create webhook deliveries, it kill -9s an API
// process, the relay and one of two dispatchers, restarts NATS and
// restarts PostgreSQL, at random points of a seeded schedule, and then
// checks that every delivery PostgreSQL recorded reached the receiver with
// its original webhook-id and ended `succeeded`, counting duplicates and
// the time to recover.
//
// Everything runs as deployed, on loopback: the `oficina` binary is built
// fresh for the run and started as separate processes (two `serve`, one
// `relay`, two `dispatch`); PostgreSQL is a server of the run's own
// (initdb in a temporary directory, on a free port) so it can be crashed
// without touching the shared cluster; NATS is an embedded JetStream
// server in the calling process, restarted on the same port and store; the
// webhook receiver is an httptest TLS server the processes are told to
// trust.
//
// Run is the library entry point; TestChaosNothingLost runs a short
// schedule in `make test` and the long one (CHAOS_DURATION) in
// `make chaos`. docs/faults.md describes what a run proves.
package chaos
