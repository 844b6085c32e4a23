package wire

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// DESIGN "Trust boundaries": X-Forwarded-For is read only when the peer is
// a trusted proxy, from the right, skipping trusted hops; the first
// untrusted address is the client, and what the client wrote left of it
// is ignored.
func TestClientAddrFromTrustedProxiesOnly(t *testing.T) {
	t.Parallel()
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:1::/48")}
	for _, tc := range []struct {
		name, peer string
		xff        []string
		trusted    []netip.Prefix
		want       string
	}{
		{"no proxies configured: the peer, whatever the header says", "198.51.100.7:4000", []string{"203.0.113.9"}, nil, "198.51.100.7"},
		{"peer not a trusted proxy: the peer", "198.51.100.7:4000", []string{"203.0.113.9"}, proxies, "198.51.100.7"},
		{"one proxy: its appended entry", "10.0.0.5:4000", []string{"198.51.100.7"}, proxies, "198.51.100.7"},
		{"forged first hop is ignored", "10.0.0.5:4000", []string{"203.0.113.9, 198.51.100.7"}, proxies, "198.51.100.7"},
		{"two proxies: skip the trusted hop", "10.0.0.5:4000", []string{"203.0.113.9, 198.51.100.7, 10.1.2.3"}, proxies, "198.51.100.7"},
		{"headers repeated: read as one list", "10.0.0.5:4000", []string{"203.0.113.9", "198.51.100.7, 10.1.2.3"}, proxies, "198.51.100.7"},
		{"entry with a port", "10.0.0.5:4000", []string{"198.51.100.7:5555"}, proxies, "198.51.100.7"},
		{"IPv6 client", "[2001:db8:1::9]:443", []string{"2001:db8:2::7"}, proxies, "2001:db8:2::7"},
		{"malformed entry: the hop right of it", "10.0.0.5:4000", []string{"198.51.100.7, garbage, 10.1.2.3"}, proxies, "10.1.2.3"},
		{"malformed last entry: the proxy", "10.0.0.5:4000", []string{"garbage"}, proxies, "10.0.0.5"},
		{"no header: the proxy", "10.0.0.5:4000", nil, proxies, "10.0.0.5"},
		{"all trusted: the leftmost", "10.0.0.5:4000", []string{"10.9.9.9, 10.1.2.3"}, proxies, "10.9.9.9"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.peer
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := ClientAddr(r, tc.trusted); got != netip.MustParseAddr(tc.want) {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func FuzzClientAddr(f *testing.F) {
	for _, s := range []string{"203.0.113.9, 198.51.100.7", "", ",,,", "[::1]:80", "1.2.3.4:99999", "::ffff:1.2.3.4"} {
		f.Add(s)
	}
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	f.Fuzz(func(t *testing.T, xff string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "127.0.0.1:1"
		r.Header.Set("X-Forwarded-For", xff)
		if a := ClientAddr(r, trusted); !a.IsValid() {
			t.Fatalf("%q: no address", xff)
		}
	})
}
