// Package dispatch delivers webhooks: it owns DELIVERIES partitions (through
// package lease), consumes each owned partition with its durable consumer,
// applies the concurrency caps per company and per endpoint, checks the
// subscriber's access and the company's plan before each send, POSTs the
// signed body through the destination guard's client, records every
// outcome in PostgreSQL (one function call per cycle, each company's rows
// under its own setting), and schedules the next attempt as a JetStream
// message schedule. docs/dispatch.md explains the schedule, caps and ownership.
package dispatch
