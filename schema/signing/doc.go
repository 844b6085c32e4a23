// Package signing signs webhook deliveries the way the Standard Webhooks
// specification describes, so that receivers can check them with any of the
// published Standard Webhooks libraries instead of code written for us.
//
// A secret is "whsec_" followed by the base64 of 32 random bytes; the HMAC key
// is the decoded bytes. The signed content is "{webhook-id}.{webhook-timestamp}.{body}"
// and the header carries "v1,<base64 HMAC-SHA256>". While a secret is being
// rotated both keys sign the same delivery, and the header carries one
// signature per key separated by spaces; receivers accept the delivery when any
// one of them matches.
//
// The package does no I/O and reads no clock: the caller passes the attempt
// time, so the dispatcher's injected clock decides what webhook-timestamp says.
package signing
