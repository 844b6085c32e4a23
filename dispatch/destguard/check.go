package destguard

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// forbiddenSuffixes are names, and parents of names, that never denote a
// tenant's public server: local and internal zones, special-use and
// reserved TLDs (RFC 2606, 6761, 6762, 8375, 9476), cluster DNS and cloud
// metadata names. Matching is by whole labels.
var forbiddenSuffixes = []string{
	"localhost", "localdomain", "local", "internal", "intranet", "intra",
	"lan", "corp", "home", "private", "priv", "arpa", // arpa covers home.arpa
	"test", "example", "invalid", "onion", "alt", "svc", "kubernetes.default",
	"metadata.goog", // metadata.google.internal is covered by internal
}

// CheckURL validates a webhook URL at registration: the scheme must be https,
// there must be no user information, the port must be 1 to 65535, the host
// must be a canonical IP literal or a DNS name outside local and internal
// zones, and every address it resolves to (A and AAAA) must be public.
//
// A refusal is a [*RefusedError]; other errors (none today) would be internal
// failures. Resolver failures and empty answers are refused with Reason
// [ReasonUnresolvable]; the resolver error is kept as the cause.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return refused(ReasonInvalidURL, "the URL cannot be parsed", err)
	}
	name, ip, err := checkStatic(u)
	if err != nil {
		return err
	}
	if ip.IsValid() {
		return g.checkAddr(ip, "")
	}
	if _, err := g.resolve(ctx, "ip", name); err != nil {
		if errors.Is(err, ErrResolve) {
			return refused(ReasonUnresolvable, fmt.Sprintf("%s does not resolve", name), err)
		}
		return err
	}
	return nil
}

// checkStatic applies every rule that needs no DNS. It returns either the
// normalised host name (lower case, no trailing dot) or the literal address.
func checkStatic(u *url.URL) (name string, ip netip.Addr, err error) {
	switch {
	case u.Scheme != "https":
		return "", ip, refused(ReasonNotHTTPS, "the scheme must be https", nil)
	case u.Opaque != "" || u.Host == "":
		return "", ip, refused(ReasonInvalidURL, "the URL must have a host", nil)
	case u.User != nil:
		return "", ip, refused(ReasonUserinfo, "the URL must not contain a user or password", nil)
	}
	if err := checkPort(u); err != nil {
		return "", ip, err
	}
	host := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() {
			return "", netip.Addr{}, refused(ReasonInvalidURL, "invalid IPv6 literal", err)
		}
		return "", ip, nil
	}
	return checkHostname(host)
}

func checkPort(u *url.URL) error {
	if strings.HasSuffix(u.Host, ":") {
		return refused(ReasonInvalidPort, "empty port", nil)
	}
	p := u.Port()
	if p == "" {
		return nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || p[0] == '0' {
		return refused(ReasonInvalidPort, fmt.Sprintf("port %q must be a number from 1 to 65535", p), err)
	}
	return nil
}

// checkHostname validates a host that is not a bracketed IPv6 literal.
func checkHostname(host string) (string, netip.Addr, error) {
	var none netip.Addr
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			return "", none, refused(ReasonInvalidHostname,
				"internationalised names must be given in A-label (xn--) form", nil)
		}
	}
	h := strings.ToLower(host)
	trimmed := strings.TrimSuffix(h, ".")
	if ip, err := netip.ParseAddr(trimmed); err == nil {
		if trimmed != h || !ip.Is4() {
			return "", none, refused(ReasonNonCanonicalIP, "IP addresses must be written as a dotted quad or a bracketed IPv6 literal", nil)
		}
		return "", ip, nil
	}
	h = trimmed
	if h == "" || len(h) > 253 {
		return "", none, refused(ReasonInvalidHostname, "invalid host name length", nil)
	}
	labels := strings.Split(h, ".")
	if isNumericLabel(labels[len(labels)-1]) {
		// A URL host whose last label is numeric is an IPv4 address to
		// browsers and curl (WHATWG URL); refuse rather than guess.
		return "", none, refused(ReasonNonCanonicalIP,
			fmt.Sprintf("%q is not a canonical dotted-quad IPv4 address", host), nil)
	}
	for _, l := range labels {
		if !validLabel(l) {
			return "", none, refused(ReasonInvalidHostname, fmt.Sprintf("%q is not a valid host name", host), nil)
		}
	}
	if len(labels) < 2 {
		return "", none, refused(ReasonForbiddenHostname, fmt.Sprintf("%q is a single-label name", h), nil)
	}
	for _, s := range forbiddenSuffixes {
		if h == s || strings.HasSuffix(h, "."+s) {
			return "", none, refused(ReasonForbiddenHostname, fmt.Sprintf("%q is a local or internal name", h), nil)
		}
	}
	return h, none, nil
}

// isNumericLabel reports whether l is a decimal or 0x-hexadecimal number, as
// the WHATWG IPv4 parser would read it.
func isNumericLabel(l string) bool {
	if l == "" {
		return false
	}
	digits := l
	hex := false
	if strings.HasPrefix(l, "0x") {
		digits, hex = l[2:], true
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		switch {
		case c >= '0' && c <= '9':
		case hex && c >= 'a' && c <= 'f':
		default:
			return false
		}
	}
	return true
}

// validLabel accepts letters, digits, hyphens and underscores (seen in real
// names), 1 to 63 bytes, not starting or ending with a hyphen.
func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
