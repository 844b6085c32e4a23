// Package mail sends the mail outbox (schema/mail): a Sender delivers the
// stored messages after their cause committed, over SMTP or, without SMTP
// settings, to the log (what `oficina dev` does).
package mail
