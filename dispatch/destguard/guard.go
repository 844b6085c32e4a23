package destguard

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"code.dny.dev/ssrf"
)

// DefaultTimeout is the whole-request timeout used when [Config.Timeout] is 0.
const DefaultTimeout = 10 * time.Second

// maxDialTimeout caps the time spent connecting (and, separately, in the TLS
// handshake), so a black-holed address cannot eat the whole request budget.
const maxDialTimeout = 5 * time.Second

// Resolver looks up the addresses of a host name. [*net.Resolver] satisfies
// it. The guard passes network "ip", "ip4" or "ip6" and a fully qualified host
// name with a trailing dot, so resolv.conf search domains never apply.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a [Guard]. The zero value is the production setting.
type Config struct {
	// AllowPrivate lists prefixes that are allowed even though they are not
	// public, for tests and development (for example 127.0.0.1/32). Empty by
	// default. Host name rules still apply. IPv4-mapped IPv6 addresses are
	// matched only by IPv6 prefixes.
	AllowPrivate []netip.Prefix

	// ExtraCAPEM holds PEM certificates trusted in addition to the system
	// roots, for tests and development. Empty by default.
	ExtraCAPEM []byte

	// Resolver resolves host names, both in CheckURL and in the delivery
	// dialer. Nil means net.DefaultResolver.
	Resolver Resolver

	// Timeout bounds a whole delivery request made with Client, including
	// reading the response body. Zero means DefaultTimeout.
	Timeout time.Duration
}

// Guard checks webhook destinations. Create it with [New]; it is safe for
// concurrent use.
type Guard struct {
	resolver Resolver
	ssrf     *ssrf.Guardian
	client   *http.Client
	roots    *x509.CertPool // nil: the system's
	timeout  time.Duration
}

// extraDenied lists public addresses that are nevertheless platform services.
// Everything else (RFC 1918, loopback, link-local including 169.254.169.254,
// 100.64.0.0/10 including 100.100.100.200, 192.0.0.0/24 including
// 192.0.0.192, IPv6 outside 2000::/3 including fd00:ec2::254, NAT64 and
// IPv4-mapped addresses) is denied by code.dny.dev/ssrf.
var extraDenied = []netip.Prefix{
	netip.MustParsePrefix("168.63.129.16/32"), // Azure WireServer / platform DNS
}

// New returns a Guard for cfg. It fails, wrapping [ErrInvalidConfig], when a
// prefix is invalid, ExtraCAPEM holds no certificate or Timeout is negative.
func New(cfg Config) (*Guard, error) {
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("%w: negative timeout %v", ErrInvalidConfig, cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	var allow4, allow6 []netip.Prefix
	for _, p := range cfg.AllowPrivate {
		if !p.IsValid() {
			return nil, fmt.Errorf("%w: invalid AllowPrivate prefix %q", ErrInvalidConfig, p)
		}
		if p.Addr().Is4() {
			allow4 = append(allow4, p.Masked())
		} else {
			allow6 = append(allow6, p.Masked())
		}
	}
	roots, err := rootPool(cfg.ExtraCAPEM)
	if err != nil {
		return nil, err
	}
	g := &Guard{
		resolver: cfg.Resolver,
		ssrf: ssrf.New(
			ssrf.WithAnyPort(),
			ssrf.WithAllowedV4Prefixes(allow4...),
			ssrf.WithAllowedV6Prefixes(allow6...),
			ssrf.WithDeniedV4Prefixes(extraDenied...),
		),
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	g.roots, g.timeout = roots, cfg.Timeout
	g.client = g.newClient(nil)
	return g, nil
}

// rootPool returns nil (system roots) when extra is empty, otherwise a copy
// of the system pool with extra added.
func rootPool(extra []byte) (*x509.CertPool, error) {
	if len(extra) == 0 {
		return nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(extra) {
		return nil, fmt.Errorf("%w: ExtraCAPEM contains no PEM certificate", ErrInvalidConfig)
	}
	return pool, nil
}

// checkAddr refuses addresses that are not public, unless AllowPrivate
// covers them. Zoned addresses (fe80::1%eth0) are always refused. name, if
// not empty, is the host name that resolved to ip.
func (g *Guard) checkAddr(ip netip.Addr, name string) error {
	var cause error
	if !ip.IsValid() || ip.Zone() != "" {
		cause = fmt.Errorf("%w: zoned or invalid address", ssrf.ErrProhibitedIP)
	} else {
		cause = g.ssrf.SafeAddr(ip)
	}
	if cause == nil {
		return nil
	}
	detail := fmt.Sprintf("%s is not a public address", ip)
	if name != "" {
		detail = fmt.Sprintf("%s resolves to %s, which is not a public address", name, ip)
	}
	return refused(ReasonPrivateAddress, detail, cause)
}

// resolve looks name up and returns its addresses, refusing the whole set
// when any of them is not public. Errors from the resolver and empty answers
// wrap [ErrResolve].
func (g *Guard) resolve(ctx context.Context, network, name string) ([]netip.Addr, error) {
	addrs, err := g.resolver.LookupNetIP(ctx, network, name+".")
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrResolve, name, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w %s: no addresses", ErrResolve, name)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		// Resolvers may return A records as IPv4-mapped IPv6 addresses.
		a = a.Unmap()
		if err := g.checkAddr(a, name); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
