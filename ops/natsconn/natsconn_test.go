package natsconn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"oficina/ops/config"
	"oficina/ops/natsconn"
	"oficina/ops/natsembed"
)

// server starts an embedded NATS with conf (authorization and TLS blocks).
func server(t *testing.T, conf string) *natsembed.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := natsembed.Start(context.Background(), natsembed.Config{Port: -1, StoreDir: t.TempDir(), ConfigFile: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// url is the server's address with the host its certificate names.
func url(s *natsembed.Server) string { return strings.Replace(s.ClientURL(), "nats://", "tls://", 1) }

// OFICINA_NATS_CA, _CERT, _KEY and _SERVER_NAME with user and password:
// mutual TLS to a server that verifies client certificates; without the
// client certificate, or without the CA, the connection is refused.
func TestTLSWithClientCertificateAndPassword(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	s := server(t, fmt.Sprintf(`
tls { cert_file: %q, key_file: %q, ca_file: %q, verify: true }
authorization { users: [ { user: api, password: "s3cret-pw" } ] }
`, p.serverCert, p.serverKey, p.ca))
	good := config.NATS{User: "api", Password: "s3cret-pw", CAFile: p.ca, CertFile: p.clientCert, KeyFile: p.clientKey, ServerName: "nats.test"}
	nc, err := natsconn.Connect(url(s), good, "api", nil)
	if err != nil {
		t.Fatalf("mutual TLS: %v", err)
	}
	if !nc.TLSRequired() {
		t.Error("connection without TLS")
	}
	nc.Close()

	for name, c := range map[string]config.NATS{
		"no client certificate": {User: "api", Password: "s3cret-pw", CAFile: p.ca, ServerName: "nats.test"},
		"no CA":                 {User: "api", Password: "s3cret-pw", CertFile: p.clientCert, KeyFile: p.clientKey, ServerName: "nats.test"},
		"wrong password":        {User: "api", Password: "wrong-pw", CAFile: p.ca, CertFile: p.clientCert, KeyFile: p.clientKey, ServerName: "nats.test"},
	} {
		nc, err := natsconn.Connect(url(s), c, "api", nil, nats.MaxReconnects(0))
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
			continue
		}
		if strings.Contains(err.Error(), c.Password) {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
	}
}

// OFICINA_NATS_TOKEN: a token server admits the token and refuses a
// client without it; the token never appears in an error.
func TestTokenAuthentication(t *testing.T) {
	t.Parallel()
	s := server(t, `authorization { token: "tok-0123456789" }`)
	nc, err := natsconn.Connect(s.ClientURL(), config.NATS{Token: "tok-0123456789"}, "relay", nil)
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	nc.Close()
	_, err = natsconn.Connect(s.ClientURL(), config.NATS{Token: "tok-wrong-987"}, "relay", nil)
	if !errors.Is(err, nats.ErrAuthorization) || strings.Contains(err.Error(), "tok-wrong-987") {
		t.Fatalf("wrong token: %v", err)
	}
	_, err = natsconn.Connect(strings.Replace(s.ClientURL(), "nats://", "nats://tok-in-url-555@", 1), config.NATS{}, "relay", nil)
	if err == nil || strings.Contains(err.Error(), "tok-in-url-555") {
		t.Fatalf("wrong token in the URL: %v", err)
	}
}

// Each role reads its replies on its own inbox (the server configuration
// lets it subscribe there only), unless the setting names another.
func TestEachRoleHasItsOwnInbox(t *testing.T) {
	t.Parallel()
	s := server(t, ``)
	for c, want := range map[config.NATS]string{{}: "_INBOX.dispatch.", {InboxPrefix: "_INBOX.custom"}: "_INBOX.custom."} {
		nc, err := natsconn.Connect(s.ClientURL(), c, "dispatch", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := nc.NewRespInbox(); !strings.HasPrefix(got, want) {
			t.Errorf("inbox %q, want prefix %q", got, want)
		}
		nc.Close()
	}
}

// Settings that cannot go together are refused before connecting, and a
// missing file is named.
func TestConflictingOrMissingSettingsAreRefused(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]config.NATS{
		"two identities":       {Token: "t", NKeyFile: "x.nk"},
		"user without secret":  {User: "api"},
		"cert without its key": {CertFile: "c.pem"},
		"missing seed":         {NKeyFile: filepath.Join(t.TempDir(), "none.nk")},
		"missing CA":           {CAFile: filepath.Join(t.TempDir(), "none.pem")},
	} {
		if _, err := natsconn.Options(c, "api", nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
