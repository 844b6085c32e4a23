package wire

import (
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr is the address of the client that sent r: the TCP peer or,
// when the peer is one of the trusted proxies, read from X-Forwarded-For
// from the right. Each proxy appends the address it received the request
// from, so the rightmost entries are the trusted hops and the first
// address that is not a trusted proxy is the client; whatever stands left
// of it was written by the client and proves nothing. A malformed entry
// ends the walk: the hop right of it is the best known address.
func ClientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := addrOf(r.RemoteAddr)
	if !peer.IsValid() || !in(trusted, peer) {
		return peer
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a := addrOf(strings.TrimSpace(hops[i]))
		if !a.IsValid() {
			return client
		}
		client = a
		if !in(trusted, a) {
			return a
		}
	}
	return client // every hop is a trusted proxy: the leftmost one
}

// addrOf parses an address with or without a port ("203.0.113.9",
// "203.0.113.9:5000", "[2001:db8::1]:443"); IPv4-mapped IPv6 becomes IPv4.
func addrOf(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}
	}
	return a.WithZone("").Unmap()
}

func in(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
