package destguard

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

const (
	publicV4 = "93.184.215.14"
	publicV6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c"
)

// resolverFunc adapts a function to Resolver.
type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

var errNoSuchHost = errors.New("no such host")

// staticResolver answers from a table keyed by name without the trailing
// dot; unknown names fail. It honours "ip4" and "ip6" like net.Resolver.
// Callers must pass fully qualified names, as the guard promises.
func staticResolver(t testing.TB, table map[string][]string) Resolver {
	return resolverFunc(func(_ context.Context, network, host string) ([]netip.Addr, error) {
		if !strings.HasSuffix(host, ".") {
			t.Errorf("resolver got %q, want a fully qualified name", host)
		}
		addrs, ok := table[strings.TrimSuffix(host, ".")]
		if !ok {
			return nil, errNoSuchHost
		}
		var out []netip.Addr
		for _, s := range addrs {
			a := netip.MustParseAddr(s)
			if network == "ip4" && !a.Unmap().Is4() || network == "ip6" && a.Unmap().Is4() {
				continue
			}
			out = append(out, a)
		}
		return out, nil
	})
}

func newGuard(t testing.TB, cfg Config) *Guard {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

func loopbackOnly() []netip.Prefix {
	return []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
}

// serverCAPEM returns the httptest server's certificate as PEM.
func serverCAPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// unrelatedCAPEM returns a freshly generated self-signed CA that signed
// nothing the test servers present.
func unrelatedCAPEM(t testing.TB) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "unrelated test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
