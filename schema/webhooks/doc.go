// Package webhooks holds webhook endpoints (spec 2.8, 3.3, 4.6): their
// validation (destination rules, event names), the plan quota, the
// subscriber whose access the dispatcher checks, secrets and their rotation,
// the delivery log (filters, attempts as sent and got, health over 24 h),
// pings, manual resends and recovery tasks, and what key rotation and
// revocation do to endpoints. Events and deliveries themselves are recorded
// by package streams; the HTTP handlers only call in here.
package webhooks
