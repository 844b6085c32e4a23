// Package scaleout proves that Oficina keeps its promises when it runs on
// more than one process and more than one NATS server (issue 9, "a real
// cluster"). It has no code of its own: its tests start the real parts in
// process, on loopback, against the test database —
//
//   - a 3-node JetStream cluster with replicated streams, the public API and
//     two dispatchers, one node stopped under a steady write load: every
//     recorded delivery still reaches its receiver, once per webhook-id as
//     far as possible, and dispatch goes on while the node is down;
//   - two API processes and two dispatchers on one NATS: a company's rate
//     limit is exact across both APIs, and the delivery caps (5 per
//     endpoint, 10 per company, 1 for a failing endpoint) hold at the
//     receiver while both dispatchers deliver.
//
// docs/operating.md ("Scale-out") describes the deployment these tests
// model.
package scaleout
