package destguard

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"code.dny.dev/ssrf"
)

func TestReasonClassifiesDeliveryErrors(t *testing.T) {
	t.Parallel()
	post := func(err error) error { return &url.Error{Op: "Post", URL: "https://hook.acme.com/", Err: err} }
	dial := func(err error) error { return post(&net.OpError{Op: "dial", Net: "tcp", Err: err}) }
	tests := []struct {
		rule string
		err  error
		want string
	}{
		{"nil is no reason", nil, ""},
		{"refusal keeps its word", post(refused(ReasonPrivateAddress, "x", nil)), "destination_refused: private_address"},
		{"ssrf control refusal", dial(fmt.Errorf("%w: 10.0.0.1", ssrf.ErrProhibitedIP)), "destination_refused: private_address"},
		{"ssrf network refusal", dial(ssrf.ErrProhibitedNetwork), "destination_refused: prohibited_network"},
		{"resolver failure", post(fmt.Errorf("%w x: %w", ErrResolve, errNoSuchHost)), "dns_error"},
		{"dns error", post(&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}), "dns_error"},
		{"unknown authority", post(&tlsVerifyErr{x509.UnknownAuthorityError{}}), "tls_error: unknown_authority"},
		{"hostname mismatch", post(x509.HostnameError{Host: "x"}), "tls_error: hostname_mismatch"},
		{"expired", post(x509.CertificateInvalidError{Reason: x509.Expired}), "tls_error: certificate_expired"},
		{"untyped tls failure stays generic", dial(errors.New("tls: handshake failure")), "request_failed"},
		{"peer alert", post(&net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}), "tls_error: alert"},
		{"deadline", post(context.DeadlineExceeded), "timeout"},
		{"socket deadline", dial(os.ErrDeadlineExceeded), "timeout"},
		{"canceled", post(context.Canceled), "canceled"},
		{"connection refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), "connection_refused"},
		{"connection reset", post(os.NewSyscallError("read", syscall.ECONNRESET)), "connection_reset"},
		{"host unreachable", dial(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), "network_unreachable"},
		{"closed early", post(io.ErrUnexpectedEOF), "connection_closed"},
		{"anything else", errors.New("boom"), "request_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			t.Parallel()
			if got := Reason(tt.err); got != tt.want {
				t.Errorf("Reason(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

// tlsVerifyErr wraps like *tls.CertificateVerificationError does.
type tlsVerifyErr struct{ err error }

func (e *tlsVerifyErr) Error() string { return "tls: " + e.err.Error() }
func (e *tlsVerifyErr) Unwrap() error { return e.err }
