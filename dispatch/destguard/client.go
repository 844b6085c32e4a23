package destguard

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// Client returns an HTTP client for webhook deliveries. It shares one
// connection pool with every other client returned by the same Guard.
//
// Each request is checked again against the rules of [Guard.CheckURL] that
// need no DNS; the dialer then resolves the host with the Guard's resolver,
// refuses it if any address is not public, and dials only checked addresses
// with code.dny.dev/ssrf as the socket Control function. Proxies from the
// environment are ignored. Redirects are not followed: a 3xx is returned as
// the response and the caller must treat it as a failed delivery.
// Certificates are verified against the system roots plus Config.ExtraCAPEM,
// with TLS 1.2 as the minimum.
func (g *Guard) Client() *http.Client {
	c := *g.client
	return &c
}

// ClientWithCertificate is Client presenting cert to receivers that ask
// for one (mutual TLS, issue 27 item 2): the same rules, timeouts and trust,
// and connections of its own, so that a connection made with one
// endpoint's certificate never carries another's request.
func (g *Guard) ClientWithCertificate(cert tls.Certificate) *http.Client {
	return g.newClient([]tls.Certificate{cert})
}

func (g *Guard) newClient(certs []tls.Certificate) *http.Client {
	roots, timeout := g.roots, g.timeout
	step := min(timeout, maxDialTimeout)
	tr := &http.Transport{
		Proxy:       nil, // never from the environment (HTTP_PROXY etc.)
		DialContext: (&dialer{g: g, timeout: step}).DialContext,
		TLSClientConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			RootCAs:      roots,
			Certificates: certs,
		},
		ForceAttemptHTTP2:     true, // a custom dialer and TLS config disable it otherwise
		TLSHandshakeTimeout:   step,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		// Many endpoints share a receiver host (an integrator's, a
		// platform's): keep enough idle connections per host for every
		// send a dispatcher may have in flight there, so each send does
		// not pay a new TLS handshake.
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    256,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: &guardedTransport{g: g, base: tr},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
		Timeout: timeout,
	}
}

// guardedTransport re-applies the static URL rules to every request, so a
// URL that bypassed registration (or an old row) is still refused.
type guardedTransport struct {
	g    *Guard
	base *http.Transport
}

func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		return nil, refused(ReasonInvalidURL, "request without URL", nil)
	}
	_, ip, err := checkStatic(req.URL)
	if err == nil && ip.IsValid() {
		err = t.g.checkAddr(ip, "")
	}
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // RoundTrip must close the body, even on error
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections closes idle pooled connections; http.Client calls it.
func (t *guardedTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// dialer resolves through the Guard and dials only checked addresses.
type dialer struct {
	g       *Guard
	timeout time.Duration
}

func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var lookup string
	switch network {
	case "tcp":
		lookup = "ip"
	case "tcp4":
		lookup = "ip4"
	case "tcp6":
		lookup = "ip6"
	default:
		return nil, refused(ReasonProhibitedNetwork, fmt.Sprintf("network %q is not allowed", network), nil)
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, refused(ReasonInvalidURL, fmt.Sprintf("bad address %q", address), err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return nil, refused(ReasonInvalidPort, fmt.Sprintf("port %q must be a number from 1 to 65535", portStr), err)
	}
	addrs, err := d.addrs(ctx, lookup, host)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	nd := &net.Dialer{Control: d.g.ssrf.Safe}
	var first error
	for i, ip := range addrs {
		actx, acancel := partialDeadline(ctx, len(addrs)-i)
		conn, err := nd.DialContext(actx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		acancel()
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// addrs returns the checked addresses to dial for host.
func (d *dialer) addrs(ctx context.Context, lookup, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := d.g.checkAddr(ip, ""); err != nil {
			return nil, err
		}
		return []netip.Addr{ip}, nil
	}
	// Same name rules as registration. Literals were handled above, so a
	// valid ip here can only come from a non-canonical spelling.
	name, ip, err := checkHostname(host)
	if err == nil && ip.IsValid() {
		err = refused(ReasonNonCanonicalIP, host, nil)
	}
	if err != nil {
		return nil, err
	}
	return d.g.resolve(ctx, lookup, name)
}

// partialDeadline gives one of the remaining addresses its share of the time
// left, at least 2s, like the standard library's dialer does.
func partialDeadline(ctx context.Context, remaining int) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok || remaining <= 1 {
		return context.WithCancel(ctx)
	}
	share := time.Until(deadline) / time.Duration(remaining)
	share = max(share, 2*time.Second)
	return context.WithTimeout(ctx, share)
}
