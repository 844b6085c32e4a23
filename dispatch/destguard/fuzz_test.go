package destguard

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"code.dny.dev/ssrf"
)

// fuzzResolver is deterministic: names containing "nx" fail, "priv" adds a
// private address, "loop" resolves to ::1, anything else is public.
var fuzzResolver = resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch {
	case strings.Contains(host, "nx"):
		return nil, errNoSuchHost
	case strings.Contains(host, "priv"):
		return []netip.Addr{netip.MustParseAddr(publicV4), netip.MustParseAddr("10.0.0.1")}, nil
	case strings.Contains(host, "loop"):
		return []netip.Addr{netip.MustParseAddr("::1")}, nil
	}
	return []netip.Addr{netip.MustParseAddr(publicV4), netip.MustParseAddr(publicV6)}, nil
})

var knownReasons = []string{
	ReasonInvalidURL, ReasonNotHTTPS, ReasonUserinfo, ReasonInvalidPort, ReasonInvalidHostname,
	ReasonNonCanonicalIP, ReasonForbiddenHostname, ReasonPrivateAddress, ReasonUnresolvable,
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://hook.acme.com/x", "https://93.184.215.14:8443/", "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/",
		"https://127.0.0.1/", "https://0x7f.1/", "https://2130706433/", "https://[::ffff:127.0.0.1]/",
		"https://[fe80::1%25eth0]/", "https://localhost./", "https://priv.acme.com/", "https://nx.acme.com/",
		"https://u:p@hook.acme.com/", "http://hook.acme.com/", "https://hook.acme.com:0/", "https://bücher.com/",
	} {
		f.Add(s)
	}
	g := newGuard(f, Config{Resolver: fuzzResolver})
	f.Fuzz(func(t *testing.T, raw string) {
		err := g.CheckURL(context.Background(), raw)
		if err != nil {
			re, ok := errors.AsType[*RefusedError](err)
			if !ok || !slices.Contains(knownReasons, re.Reason) {
				t.Fatalf("CheckURL(%q) = %v, want *RefusedError with a known reason", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || u.Scheme != "https" || u.User != nil || u.Opaque != "" {
			t.Fatalf("accepted %q: parse err %v, scheme %q, user %v", raw, perr, u.Scheme, u.User)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("accepted %q with port %q", raw, p)
			}
		}
		host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
		if ip, err := netip.ParseAddr(host); err == nil {
			if !oraclePublic(ip) {
				t.Fatalf("accepted %q with non-public literal %s", raw, ip)
			}
			return
		}
		if !strings.Contains(host, ".") || host == "localhost" || strings.HasSuffix(host, ".internal") {
			t.Fatalf("accepted %q with forbidden host %q", raw, host)
		}
		addrs, err := fuzzResolver(context.Background(), "ip", host+".")
		if err != nil || len(addrs) == 0 {
			t.Fatalf("accepted %q whose host does not resolve", raw)
		}
		for _, a := range addrs {
			if !oraclePublic(a.Unmap()) {
				t.Fatalf("accepted %q resolving to non-public %s", raw, a)
			}
		}
	})
}

// oraclePublic is an independent statement of "public": the standard
// library's classification plus the special-purpose lists.
func oraclePublic(ip netip.Addr) bool {
	if ip.Zone() != "" || !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.Is4In6() {
		return false
	}
	denied := ssrf.IPv4DeniedPrefixes
	if ip.Is6() {
		if !ssrf.IPv6GlobalUnicast.Contains(ip) {
			return false
		}
		denied = ssrf.IPv6DeniedPrefixes
	}
	for _, p := range append(slices.Clone(denied), extraDenied...) {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}
