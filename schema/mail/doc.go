// Package mail is the mail outbox's records: messages to a company's people
// (owners and admins) are stored in the transaction of the write that causes
// them, so a mail exists exactly when its cause committed. The sender that
// delivers them over SMTP (or to the log) is ops/mail.
package mail
