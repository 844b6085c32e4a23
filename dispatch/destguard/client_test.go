package destguard

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// receiver starts a TLS server on 127.0.0.1 that counts the requests it
// serves and answers with h (200 "ok" when nil).
func receiver(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	if h == nil {
		h = func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are expected
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &hits
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(`{"event":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, err
}

// withPort returns https://host:port/path for the port of srv.
func withPort(t *testing.T, srv *httptest.Server, host string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return "https://" + net.JoinHostPort(host, port) + "/hook"
}

func wantReason(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("request succeeded, want failure %q", want)
	}
	if got := Reason(err); got != want {
		t.Errorf("Reason(%v) = %q, want %q", err, got, want)
	}
}

func TestClientRefusesLoopbackAtDialWithoutAllowPrivate(t *testing.T) {
	t.Parallel()
	srv, hits := receiver(t, nil)
	g := newGuard(t, Config{ExtraCAPEM: serverCAPEM(srv)})
	_, err := get(t, g.Client(), srv.URL)
	wantReason(t, err, "destination_refused: private_address")
	if !errors.Is(err, ErrRefused) {
		t.Errorf("errors.Is(err, ErrRefused) = false for %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}
}

// Issue 16 item 5: a receiver that offers HTTP/2 over TLS is reached over
// HTTP/2 through the guard's client (one connection multiplexes the
// dispatcher's sends instead of one TLS connection each), as the receiver
// sees it.
func TestClientDeliversWithAllowPrivateAndExtraCA(t *testing.T) {
	t.Parallel()
	var proto atomic.Int64
	srv, hits := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int64(r.ProtoMajor))
		io.WriteString(w, "ok")
	})
	g := newGuard(t, Config{AllowPrivate: loopbackOnly(), ExtraCAPEM: serverCAPEM(srv)})
	if err := g.CheckURL(context.Background(), srv.URL); err != nil {
		t.Fatalf("CheckURL(%s) = %v", srv.URL, err)
	}
	resp, err := get(t, g.Client(), srv.URL)
	if err != nil {
		t.Fatalf("delivery failed: %v (%s)", err, Reason(err))
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "ok" || hits.Load() != 1 {
		t.Errorf("got %d %q after %d hits, want 200 \"ok\" after 1", resp.StatusCode, body, hits.Load())
	}
	if resp.ProtoMajor != 2 || proto.Load() != 2 {
		t.Errorf("protocol %s, receiver saw HTTP/%d: want HTTP/2 to be negotiated", resp.Proto, proto.Load())
	}
}

func TestDialControlChecksSocketAddress(t *testing.T) {
	t.Parallel()
	strict := newGuard(t, Config{})
	dev := newGuard(t, Config{AllowPrivate: loopbackOnly()})
	for _, tt := range []struct {
		g       *Guard
		network string
		addr    string
		ok      bool
	}{
		{strict, "tcp4", publicV4 + ":8443", true}, // any port
		{strict, "tcp6", "[" + publicV6 + "]:443", true},
		{strict, "tcp4", "127.0.0.1:443", false},
		{strict, "tcp6", "[::ffff:127.0.0.1]:443", false},
		{strict, "tcp4", "169.254.169.254:80", false},
		{strict, "udp4", publicV4 + ":443", false},
		{dev, "tcp4", "127.0.0.1:8443", true},
		{dev, "tcp4", "127.0.0.2:8443", false},
	} {
		err := tt.g.ssrf.Safe(tt.network, tt.addr, nil)
		if (err == nil) != tt.ok {
			t.Errorf("Safe(%s, %s) = %v, want ok=%v", tt.network, tt.addr, err, tt.ok)
		}
	}
}

func TestClientReturnsRedirectWithoutFollowing(t *testing.T) {
	t.Parallel()
	var followed atomic.Bool
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Store(true)
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	g := newGuard(t, Config{AllowPrivate: loopbackOnly(), ExtraCAPEM: serverCAPEM(srv)})
	resp, err := get(t, g.Client(), srv.URL)
	if err != nil {
		t.Fatalf("delivery failed: %v", err)
	}
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/elsewhere" {
		t.Errorf("got %d Location=%q, want 302 /elsewhere", resp.StatusCode, resp.Header.Get("Location"))
	}
	if followed.Load() {
		t.Error("redirect was followed")
	}
}

func TestClientRejectsCertificateFromUnknownAuthority(t *testing.T) {
	t.Parallel()
	srv, hits := receiver(t, nil)
	g := newGuard(t, Config{AllowPrivate: loopbackOnly(), ExtraCAPEM: unrelatedCAPEM(t)})
	_, err := get(t, g.Client(), srv.URL)
	wantReason(t, err, "tls_error: unknown_authority")
	if n := hits.Load(); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}
}

func TestClientRejectsCertificateForOtherName(t *testing.T) {
	t.Parallel()
	srv, _ := receiver(t, nil)
	g := newGuard(t, Config{
		AllowPrivate: loopbackOnly(),
		ExtraCAPEM:   serverCAPEM(srv),
		Resolver:     staticResolver(t, map[string][]string{"hook.acme.com": {"127.0.0.1"}}),
	})
	_, err := get(t, g.Client(), withPort(t, srv, "hook.acme.com"))
	wantReason(t, err, "tls_error: hostname_mismatch")
}

func TestClientRejectsPlainHTTPReceiver(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	g := newGuard(t, Config{AllowPrivate: loopbackOnly()})
	_, err := get(t, g.Client(), withPort(t, srv, "127.0.0.1"))
	wantReason(t, err, "tls_error: not_tls")
}

func TestClientRefusesDNSRebindingAtDial(t *testing.T) {
	t.Parallel()
	srv, hits := receiver(t, nil)
	var calls atomic.Int64
	rebinding := resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if calls.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr(publicV4)}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	g := newGuard(t, Config{ExtraCAPEM: serverCAPEM(srv), Resolver: rebinding})
	url := withPort(t, srv, "example.com") // a name the test certificate is valid for
	if err := g.CheckURL(context.Background(), url); err != nil {
		t.Fatalf("CheckURL = %v, want nil while the name looks public", err)
	}
	_, err := get(t, g.Client(), url)
	wantReason(t, err, "destination_refused: private_address")
	if calls.Load() < 2 {
		t.Errorf("resolver called %d times, want the dialer to resolve again", calls.Load())
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}
}

func TestClientRefusesMixedAddressSetAtDial(t *testing.T) {
	t.Parallel()
	srv, hits := receiver(t, nil)
	g := newGuard(t, Config{
		ExtraCAPEM: serverCAPEM(srv),
		Resolver:   staticResolver(t, map[string][]string{"example.com": {publicV4, "127.0.0.1"}}),
	})
	_, err := get(t, g.Client(), withPort(t, srv, "example.com"))
	wantReason(t, err, "destination_refused: private_address")
	if n := hits.Load(); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}
}

func TestClientReappliesURLRulesPerRequest(t *testing.T) {
	t.Parallel()
	srv, _ := receiver(t, nil)
	g := newGuard(t, Config{AllowPrivate: loopbackOnly(), ExtraCAPEM: serverCAPEM(srv)})
	for url, want := range map[string]string{
		"http://" + srv.Listener.Addr().String() + "/":      "destination_refused: not_https",
		"https://u:p@" + srv.Listener.Addr().String() + "/": "destination_refused: userinfo",
		withPort(t, srv, "localhost"):                       "destination_refused: forbidden_hostname",
		withPort(t, srv, "::1"):                             "destination_refused: private_address",
	} {
		_, err := get(t, g.Client(), url)
		wantReason(t, err, want)
	}
}

func TestClientClassifiesConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	g := newGuard(t, Config{AllowPrivate: loopbackOnly()})
	_, err = get(t, g.Client(), "https://"+addr+"/")
	wantReason(t, err, "connection_refused")
}

func TestClientClassifiesTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := receiver(t, func(http.ResponseWriter, *http.Request) { <-release })
	defer close(release)
	g := newGuard(t, Config{AllowPrivate: loopbackOnly(), ExtraCAPEM: serverCAPEM(srv), Timeout: 200 * time.Millisecond})
	_, err := get(t, g.Client(), srv.URL)
	wantReason(t, err, "timeout")
}

func TestClientCopiesShareTransport(t *testing.T) {
	t.Parallel()
	g := newGuard(t, Config{})
	a, b := g.Client(), g.Client()
	if a == b || a.Transport != b.Transport {
		t.Error("Client() should return distinct clients sharing one transport")
	}
	if a.Timeout != DefaultTimeout {
		t.Errorf("Timeout = %v, want %v", a.Timeout, DefaultTimeout)
	}
}

// Not parallel: t.Setenv.
func TestClientIgnoresProxyEnvironment(t *testing.T) {
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		proxied.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer proxy.Close()
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"} {
		t.Setenv(k, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	srv, hits := receiver(t, nil)
	g := newGuard(t, Config{
		AllowPrivate: loopbackOnly(),
		ExtraCAPEM:   serverCAPEM(srv),
		// A name, because proxy code skips loopback literals anyway.
		Resolver: staticResolver(t, map[string][]string{"example.com": {"127.0.0.1"}}),
	})
	c := g.Client()
	if tr := c.Transport.(*guardedTransport).base; tr.Proxy != nil {
		t.Error("Transport.Proxy is set")
	}
	resp, err := get(t, c, withPort(t, srv, "example.com"))
	if err != nil {
		t.Fatalf("delivery failed: %v", err)
	}
	if resp.StatusCode != http.StatusOK || hits.Load() != 1 || proxied.Load() != 0 {
		t.Errorf("status %d, receiver hits %d, proxy hits %d; want 200, 1, 0",
			resp.StatusCode, hits.Load(), proxied.Load())
	}
}
