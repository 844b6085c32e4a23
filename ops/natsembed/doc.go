// Package natsembed runs nats-server (v2.15, JetStream enabled) inside the
// current process, for tests and for `oficina dev`.
//
// A single server comes from Start; a small loopback cluster for fault tests
// comes from StartCluster. Both wait until JetStream can serve requests, so
// callers may create streams as soon as they return.
package natsembed
