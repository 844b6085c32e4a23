// Package natsconn opens the NATS connections of every Oficina process
// (serve, dispatch, relay, dev, events tail, bench) the same way: the URL,
// one identity (credentials file, NKey seed, user and password, or token),
// TLS, and a reply inbox of the process's own, from config.NATS. No secret
// reaches an error or a log line: URLs are redacted and errors scrubbed.
package natsconn

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/nats-io/nats.go"

	"oficina/ops/config"
)

// InboxPrefix is the reply subject prefix of a role (api, dispatch,
// relay, consumer.<company>, …) unless the configuration names one. The
// server configuration (ops/natsauth) lets each user subscribe to its own
// prefix only: with the shared default _INBOX.> any user could read the
// messages a dispatcher fetches, every company's deliveries.
func InboxPrefix(c config.NATS, role string) string {
	if c.InboxPrefix != "" {
		return c.InboxPrefix
	}
	return "_INBOX." + role
}

// Options are the nats.go options for c and role: identity, TLS, inbox,
// connection name, and a handler that logs asynchronous errors
// (permission violations above all) to log, if not nil.
func Options(c config.NATS, role string, log *slog.Logger) ([]nats.Option, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	opts := []nats.Option{nats.Name("oficina-" + role), nats.CustomInboxPrefix(InboxPrefix(c, role))}
	switch {
	case c.CredsFile != "":
		opts = append(opts, nats.UserCredentials(c.CredsFile))
	case c.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(c.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("natsconn: OFICINA_NATS_NKEY: %w", err)
		}
		opts = append(opts, o)
	case c.User != "":
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	case c.Token != "":
		opts = append(opts, nats.Token(c.Token))
	}
	if c.TLS() {
		tc, err := tlsConfig(c)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.Secure(tc))
	}
	if log != nil {
		opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			attrs := []any{"role", role, "err", err}
			if sub != nil {
				attrs = append(attrs, "subject", sub.Subject)
			}
			log.Warn("nats: asynchronous error", attrs...)
		}))
	}
	return opts, nil
}

func tlsConfig(c config.NATS) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("natsconn: OFICINA_NATS_CA: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("natsconn: OFICINA_NATS_CA: no certificate in %s", c.CAFile)
		}
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("natsconn: OFICINA_NATS_CERT/KEY: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// Connect connects to urls (NATS_URL: one or more, comma-separated) as
// role with c, adding extra options (reconnect policy, timeouts).
func Connect(urls string, c config.NATS, role string, log *slog.Logger, extra ...nats.Option) (*nats.Conn, error) {
	opts, err := Options(c, role, log)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(urls, append(opts, extra...)...)
	if err != nil {
		return nil, &connectError{msg: scrub(fmt.Sprintf("natsconn: connect %s as %s: %v", config.RedactURLs(urls), role, err), secrets(urls, c)), err: err}
	}
	return nc, nil
}

// connectError keeps the cause for errors.Is while its text is scrubbed.
type connectError struct {
	msg string
	err error
}

func (e *connectError) Error() string { return e.msg }
func (e *connectError) Unwrap() error { return e.err }

// secrets are the strings no message may contain: the configured password
// and token, and whatever userinfo the URLs carry.
func secrets(urls string, c config.NATS) []string {
	out := []string{c.Password, c.Token}
	for p := range strings.SplitSeq(urls, ",") {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				out = append(out, pw)
			} else {
				out = append(out, u.User.Username()) // a bare userinfo is a token
			}
		} else if at := strings.LastIndex(p, "@"); at >= 0 {
			out = append(out, p[:at])
		}
	}
	return out
}

func scrub(s string, secrets []string) string {
	for _, x := range secrets {
		if len(x) >= 3 { // shorter ones would blot out ordinary words
			s = strings.ReplaceAll(s, x, "xxxxx")
		}
	}
	return s
}
