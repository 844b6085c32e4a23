package destguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"

	"code.dny.dev/ssrf"
)

// Stable machine words used in [RefusedError.Reason]. They are safe to store,
// log and map to API validation codes.
const (
	ReasonInvalidURL         = "invalid_url"         // unparsable, opaque or without a host
	ReasonNotHTTPS           = "not_https"           // scheme is not https
	ReasonUserinfo           = "userinfo"            // user or password in the URL
	ReasonInvalidPort        = "invalid_port"        // port outside 1..65535 or not canonical
	ReasonInvalidHostname    = "invalid_hostname"    // not a syntactically valid ASCII host name
	ReasonNonCanonicalIP     = "noncanonical_ip"     // numeric host that is not a dotted quad
	ReasonForbiddenHostname  = "forbidden_hostname"  // localhost, single label, internal suffixes
	ReasonPrivateAddress     = "private_address"     // address is not public (or has a zone)
	ReasonUnresolvable       = "unresolvable"        // the name has no addresses (registration)
	ReasonProhibitedNetwork  = "prohibited_network"  // dial on something other than TCP
	reasonDestinationRefused = "destination_refused" // prefix used by Reason
)

// ErrRefused matches every [*RefusedError] with errors.Is.
var ErrRefused = errors.New("destination refused")

// ErrResolve is wrapped by delivery errors raised when the dialer cannot
// resolve the destination. Registration reports the same condition as a
// [*RefusedError] with Reason [ReasonUnresolvable].
var ErrResolve = errors.New("destguard: resolve")

// ErrInvalidConfig is wrapped by errors returned from [New].
var ErrInvalidConfig = errors.New("destguard: invalid config")

// RefusedError reports a destination that the guard will not contact.
type RefusedError struct {
	Reason string // one of the Reason* constants
	Detail string // human-readable detail, safe to show to the tenant
	Err    error  // underlying cause, may be nil
}

func (e *RefusedError) Error() string {
	msg := "destination refused: " + e.Reason
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the underlying cause.
func (e *RefusedError) Unwrap() error { return e.Err }

// RefusalReason returns Reason: schema/webhooks.Refusal, by which the
// records recognise a refused URL without importing the guard.
func (e *RefusedError) RefusalReason() string { return e.Reason }

// Is reports whether target is [ErrRefused].
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refused(reason, detail string, cause error) *RefusedError {
	return &RefusedError{Reason: reason, Detail: detail, Err: cause}
}

// Reason classifies an error returned by a delivery made with
// [Guard.Client] (or by [Guard.CheckURL]) into a short word for logs and
// delivery records, such as "destination_refused: private_address",
// "tls_error: unknown_authority", "timeout" or "connection_refused".
// It returns "" for a nil error and "request_failed" when nothing matches.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	if re, ok := errors.AsType[*RefusedError](err); ok {
		return reasonDestinationRefused + ": " + re.Reason
	}
	switch {
	case errors.Is(err, ssrf.ErrProhibitedIP):
		return reasonDestinationRefused + ": " + ReasonPrivateAddress
	case errors.Is(err, ssrf.ErrProhibitedPort):
		return reasonDestinationRefused + ": " + ReasonInvalidPort
	case errors.Is(err, ssrf.ErrProhibitedNetwork), errors.Is(err, ssrf.ErrInvalidHostPort):
		return reasonDestinationRefused + ": " + ReasonProhibitedNetwork
	}
	if r := tlsReason(err); r != "" {
		return r
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok || errors.Is(err, ErrResolve) {
		return "dns_error"
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	if isTimeout(err) {
		return "timeout"
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection_refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection_reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "network_unreachable"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection_closed"
	}
	return "request_failed"
}

func tlsReason(err error) string {
	const p = "tls_error"
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return p + ": hostname_mismatch"
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return p + ": unknown_authority"
	}
	if ce, ok := errors.AsType[x509.CertificateInvalidError](err); ok {
		if ce.Reason == x509.Expired {
			return p + ": certificate_expired"
		}
		return p + ": certificate_invalid"
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return p + ": certificate_invalid"
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok || errors.Is(err, http.ErrSchemeMismatch) {
		return p + ": not_tls"
	}
	if _, ok := errors.AsType[tls.AlertError](err); ok {
		return p + ": alert"
	}
	// Alerts sent by the peer arrive as *net.OpError with this Op.
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "remote error" {
		return p + ": alert"
	}
	if _, ok := errors.AsType[*tls.ECHRejectionError](err); ok {
		return p
	}
	return ""
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}
