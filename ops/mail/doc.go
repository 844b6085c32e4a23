// Package mail is the mail outbox: messages to a company's people (owners
// and admins) are stored in the transaction of the write that causes them,
// so a mail exists exactly when its cause committed, and a Sender delivers
// them afterwards over SMTP (or, without SMTP settings, writes them to the
// log, which is what `oficina dev` does).
package mail
