package destguard

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// hostileDNS maps attacker-controlled names to the addresses they resolve to.
var hostileDNS = map[string][]string{
	"rebind.attacker.com":       {"127.0.0.1"},
	"meta.attacker.com":         {"169.254.169.254"},
	"alibaba.attacker.com":      {"100.100.100.200"},
	"oracle.attacker.com":       {"192.0.0.192"},
	"azure.attacker.com":        {"168.63.129.16"},
	"ec2v6.attacker.com":        {"fd00:ec2::254"},
	"zero.attacker.com":         {"0.0.0.0"},
	"rfc1918.attacker.com":      {"10.1.2.3", "192.168.0.10"},
	"mixed-a.attacker.com":      {publicV4, "10.0.0.5"},
	"mixed-aaaa.attacker.com":   {publicV4, publicV6, "fd00::1"},
	"mixed-v6.attacker.com":     {publicV6, "::1"},
	"mapped.attacker.com":       {"::ffff:10.0.0.1"},
	"nat64.attacker.com":        {"64:ff9b::7f00:1"},
	"linklocal6.attacker.com":   {"fe80::1"},
	"127.0.0.1.nip.io":          {"127.0.0.1"},
	"cgnat.attacker.com":        {"100.64.0.1"},
	"empty.attacker.com":        {},
	"hook.acme.com":             {publicV4, publicV6},
	"v4.acme.com":               {publicV4},
	"v6.acme.com":               {publicV6},
	"mapped-public.acme.com":    {"::ffff:" + publicV4},
	"xn--bcher-kva.com":         {publicV4},
	"my_host.acme.com":          {publicV4},
	"example.com.hook.acme.com": {publicV4},
}

func TestCheckURLRefuses(t *testing.T) {
	t.Parallel()
	g := newGuard(t, Config{Resolver: staticResolver(t, hostileDNS)})
	tests := []struct {
		rule, url, reason string
	}{
		// Scheme: https only.
		{"plain http", "http://hook.acme.com/", ReasonNotHTTPS},
		{"uppercase http", "HTTP://hook.acme.com/", ReasonNotHTTPS},
		{"ftp", "ftp://hook.acme.com/", ReasonNotHTTPS},
		{"websocket", "wss://hook.acme.com/", ReasonNotHTTPS},
		{"scheme-relative", "//hook.acme.com/x", ReasonNotHTTPS},
		{"no scheme", "hook.acme.com/x", ReasonNotHTTPS},
		{"javascript", "javascript:alert(1)", ReasonNotHTTPS},
		{"file", "file:///etc/passwd", ReasonNotHTTPS},
		// Structure.
		{"opaque https", "https:hook.acme.com", ReasonInvalidURL},
		{"empty host", "https:///path", ReasonInvalidURL},
		{"empty url", "", ReasonNotHTTPS},
		{"unclosed bracket", "https://[::1/", ReasonInvalidURL},
		{"space in host", "https://hook acme.com/", ReasonInvalidURL},
		{"bracketed ipv4", "https://[127.0.0.1]/", ReasonInvalidURL},
		// No user and password.
		{"user and password", "https://user:pass@hook.acme.com/", ReasonUserinfo},
		{"user only", "https://user@hook.acme.com/", ReasonUserinfo},
		{"empty userinfo", "https://@hook.acme.com/", ReasonUserinfo},
		{"userinfo hiding host", "https://hook.acme.com:443@127.0.0.1/", ReasonUserinfo},
		// Port 1 to 65535.
		{"port zero", "https://hook.acme.com:0/", ReasonInvalidPort},
		{"port too large", "https://hook.acme.com:65536/", ReasonInvalidPort},
		{"port way too large", "https://hook.acme.com:4294967739/", ReasonInvalidPort},
		{"port leading zero", "https://hook.acme.com:0443/", ReasonInvalidPort},
		{"empty port", "https://hook.acme.com:/", ReasonInvalidPort},
		// Forbidden names.
		{"localhost", "https://localhost/", ReasonForbiddenHostname},
		{"localhost trailing dot", "https://localhost./", ReasonForbiddenHostname},
		{"localhost uppercase", "https://LOCALHOST:8443/", ReasonForbiddenHostname},
		{"localhost percent-encoded", "https://%6c%6fcalhost/", ReasonInvalidURL}, // Go refuses %-escapes in names
		{"subdomain of localhost", "https://api.localhost/", ReasonForbiddenHostname},
		{"single label", "https://intranet/", ReasonForbiddenHostname},
		{"single label metadata", "https://metadata/", ReasonForbiddenHostname},
		{"gcp metadata", "https://metadata.google.internal/computeMetadata/v1/", ReasonForbiddenHostname},
		{"gcp metadata short", "https://metadata.goog/", ReasonForbiddenHostname},
		{"ec2 internal", "https://ip-10-0-0-1.ec2.internal/", ReasonForbiddenHostname},
		{"mdns .local", "https://printer.local/", ReasonForbiddenHostname},
		{"k8s cluster.local", "https://api.default.svc.cluster.local/", ReasonForbiddenHostname},
		{"k8s svc", "https://kubernetes.default.svc/", ReasonForbiddenHostname},
		{".lan", "https://nas.lan/", ReasonForbiddenHostname},
		{".home.arpa", "https://router.home.arpa/", ReasonForbiddenHostname},
		{"reverse dns", "https://1.0.0.127.in-addr.arpa/", ReasonForbiddenHostname},
		{".intranet", "https://wiki.intranet/", ReasonForbiddenHostname},
		{".corp", "https://mail.corp/", ReasonForbiddenHostname},
		{".test", "https://hook.test/", ReasonForbiddenHostname},
		{".localdomain trailing dot", "https://box.localdomain./", ReasonForbiddenHostname},
		// Host name syntax; IDN must be A-labels.
		{"idn homoglyph", "https://lоcalhost.com/", ReasonInvalidHostname},
		{"idn fullwidth localhost", "https://ｌｏｃａｌｈｏｓｔ/", ReasonInvalidHostname},
		{"idn unicode", "https://bücher.com/", ReasonInvalidHostname},
		{"empty label", "https://hook..acme.com/", ReasonInvalidHostname},
		{"two trailing dots", "https://hook.acme.com../", ReasonInvalidHostname},
		{"leading hyphen", "https://-hook.acme.com/", ReasonInvalidHostname},
		// Non-canonical IPv4 spellings.
		{"decimal ipv4", "https://2130706433/", ReasonNonCanonicalIP},
		{"octal ipv4", "https://0177.0.0.1/", ReasonNonCanonicalIP},
		{"hex short ipv4", "https://0x7f.1/", ReasonNonCanonicalIP},
		{"hex ipv4", "https://0x7f000001/", ReasonNonCanonicalIP},
		{"hex dotted ipv4", "https://0x7f.0x0.0x0.0x1/", ReasonNonCanonicalIP},
		{"short ipv4", "https://127.1/", ReasonNonCanonicalIP},
		{"octal whole ipv4", "https://017700000001/", ReasonNonCanonicalIP},
		{"five parts", "https://1.2.3.4.5/", ReasonNonCanonicalIP},
		{"ipv4 trailing dot", "https://127.0.0.1./", ReasonNonCanonicalIP},
		{"public ipv4 trailing dot", "https://" + publicV4 + "./", ReasonNonCanonicalIP},
		{"numeric tld", "https://hook.acme.123/", ReasonNonCanonicalIP},
		// Literal addresses that are not public.
		{"loopback", "https://127.0.0.1/", ReasonPrivateAddress},
		{"loopback other", "https://127.53.0.1:8443/", ReasonPrivateAddress},
		{"unspecified v4", "https://0.0.0.0/", ReasonPrivateAddress},
		{"rfc1918 10", "https://10.0.0.1/", ReasonPrivateAddress},
		{"rfc1918 172", "https://172.16.5.4/", ReasonPrivateAddress},
		{"rfc1918 192", "https://192.168.1.1/", ReasonPrivateAddress},
		{"aws gcp azure metadata", "https://169.254.169.254/latest/meta-data/", ReasonPrivateAddress},
		{"alibaba metadata", "https://100.100.100.200/", ReasonPrivateAddress},
		{"oracle metadata", "https://192.0.0.192/", ReasonPrivateAddress},
		{"azure wireserver", "https://168.63.129.16/", ReasonPrivateAddress},
		{"broadcast", "https://255.255.255.255/", ReasonPrivateAddress},
		{"multicast", "https://224.0.0.1/", ReasonPrivateAddress},
		{"benchmarking", "https://198.18.0.1/", ReasonPrivateAddress},
		{"documentation", "https://192.0.2.1/", ReasonPrivateAddress},
		{"ipv6 loopback", "https://[::1]/", ReasonPrivateAddress},
		{"ipv6 unspecified", "https://[::]/", ReasonPrivateAddress},
		{"ipv4-mapped loopback", "https://[::ffff:127.0.0.1]/", ReasonPrivateAddress},
		{"ipv4-mapped metadata", "https://[::ffff:a9fe:a9fe]/", ReasonPrivateAddress},
		{"ipv4-compatible", "https://[::127.0.0.1]/", ReasonPrivateAddress},
		{"nat64 loopback", "https://[64:ff9b::7f00:1]/", ReasonPrivateAddress},
		{"aws ipv6 metadata", "https://[fd00:ec2::254]/", ReasonPrivateAddress},
		{"unique local", "https://[fc00::1]/", ReasonPrivateAddress},
		{"link-local with zone", "https://[fe80::1%25eth0]/", ReasonPrivateAddress},
		{"6to4 of loopback", "https://[2002:7f00:1::1]/", ReasonPrivateAddress},
		{"ipv6 documentation", "https://[2001:db8::1]/", ReasonPrivateAddress},
		{"ipv6 multicast", "https://[ff02::1]/", ReasonPrivateAddress},
		// Names resolving to addresses that are not public.
		{"name to loopback", "https://rebind.attacker.com/", ReasonPrivateAddress},
		{"name to metadata", "https://meta.attacker.com/", ReasonPrivateAddress},
		{"name to alibaba metadata", "https://alibaba.attacker.com/", ReasonPrivateAddress},
		{"name to oracle metadata", "https://oracle.attacker.com/", ReasonPrivateAddress},
		{"name to azure wireserver", "https://azure.attacker.com/", ReasonPrivateAddress},
		{"name to aws ipv6 metadata", "https://ec2v6.attacker.com/", ReasonPrivateAddress},
		{"name to unspecified", "https://zero.attacker.com/", ReasonPrivateAddress},
		{"name to rfc1918", "https://rfc1918.attacker.com/", ReasonPrivateAddress},
		{"name to cgnat", "https://cgnat.attacker.com/", ReasonPrivateAddress},
		{"public and private A records", "https://mixed-a.attacker.com/", ReasonPrivateAddress},
		{"public A and private AAAA", "https://mixed-aaaa.attacker.com/", ReasonPrivateAddress},
		{"public and loopback AAAA", "https://mixed-v6.attacker.com/", ReasonPrivateAddress},
		{"mapped private AAAA", "https://mapped.attacker.com/", ReasonPrivateAddress},
		{"nat64 AAAA", "https://nat64.attacker.com/", ReasonPrivateAddress},
		{"link-local AAAA", "https://linklocal6.attacker.com/", ReasonPrivateAddress},
		{"wildcard dns to loopback", "https://127.0.0.1.nip.io/", ReasonPrivateAddress},
		{"uppercase name to loopback", "https://REBIND.Attacker.COM./", ReasonPrivateAddress},
		// Names that do not resolve.
		{"nxdomain", "https://nx.acme.com/", ReasonUnresolvable},
		{"no records", "https://empty.attacker.com/", ReasonUnresolvable},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			t.Parallel()
			err := g.CheckURL(context.Background(), tt.url)
			re, ok := errors.AsType[*RefusedError](err)
			if !ok {
				t.Fatalf("CheckURL(%q) = %v, want *RefusedError %s", tt.url, err, tt.reason)
			}
			if re.Reason != tt.reason {
				t.Errorf("CheckURL(%q) reason = %s (%v), want %s", tt.url, re.Reason, err, tt.reason)
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("errors.Is(%v, ErrRefused) = false", err)
			}
			if got, want := Reason(err), "destination_refused: "+tt.reason; got != want {
				t.Errorf("Reason = %q, want %q", got, want)
			}
		})
	}
}

func TestCheckURLAcceptsPublic(t *testing.T) {
	t.Parallel()
	g := newGuard(t, Config{Resolver: staticResolver(t, hostileDNS)})
	for _, u := range []string{
		"https://hook.acme.com/webhooks",
		"https://hook.acme.com:8443/x?y=1#frag",
		"https://hook.acme.com:1/",
		"https://hook.acme.com:65535/",
		"HTTPS://HOOK.ACME.COM/",
		"https://hook.acme.com./",
		"https://v4.acme.com/",
		"https://v6.acme.com/",
		"https://mapped-public.acme.com/",
		"https://xn--bcher-kva.com/",
		"https://my_host.acme.com/",
		"https://" + publicV4 + "/",
		"https://" + publicV4 + ":8443/",
		"https://[" + publicV6 + "]/",
		"https://example.com.hook.acme.com/", // "example" as a non-final label is fine
	} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			if err := g.CheckURL(context.Background(), u); err != nil {
				t.Errorf("CheckURL(%q) = %v, want nil", u, err)
			}
		})
	}
}

func TestCheckURLAllowPrivateIsExplicit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGuard(t, Config{AllowPrivate: loopbackOnly(), Resolver: staticResolver(t, hostileDNS)})
	if err := g.CheckURL(ctx, "https://127.0.0.1:8443/"); err != nil {
		t.Errorf("allowed loopback: %v", err)
	}
	if err := g.CheckURL(ctx, "https://rebind.attacker.com/"); err != nil {
		t.Errorf("allowed loopback by name: %v", err)
	}
	for _, u := range []string{
		"https://127.0.0.2/",          // outside the /32
		"https://[::1]/",              // IPv6 needs its own prefix
		"https://[::ffff:127.0.0.1]/", // mapped form is IPv6
		"https://localhost/",          // name rules still apply
		"https://169.254.169.254/",    // other ranges still refused
		"http://127.0.0.1/",           // scheme still enforced
	} {
		if err := g.CheckURL(ctx, u); !errors.Is(err, ErrRefused) {
			t.Errorf("CheckURL(%q) = %v, want refusal", u, err)
		}
	}
}

func TestCheckURLKeepsResolverErrorAsCause(t *testing.T) {
	t.Parallel()
	g := newGuard(t, Config{Resolver: staticResolver(t, hostileDNS)})
	err := g.CheckURL(context.Background(), "https://nx.acme.com/")
	if !errors.Is(err, errNoSuchHost) || !errors.Is(err, ErrResolve) {
		t.Errorf("CheckURL = %v, want it to wrap the resolver error and ErrResolve", err)
	}
}

func TestCheckURLAsksForAllAddressFamilies(t *testing.T) {
	t.Parallel()
	var gotNetwork, gotHost string
	r := resolverFunc(func(_ context.Context, network, host string) ([]netip.Addr, error) {
		gotNetwork, gotHost = network, host
		return []netip.Addr{netip.MustParseAddr(publicV4)}, nil
	})
	g := newGuard(t, Config{Resolver: r})
	if err := g.CheckURL(context.Background(), "https://Hook.Acme.com./"); err != nil {
		t.Fatal(err)
	}
	if gotNetwork != "ip" || gotHost != "hook.acme.com." {
		t.Errorf("resolver called with (%q, %q), want (\"ip\", \"hook.acme.com.\")", gotNetwork, gotHost)
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]Config{
		"negative timeout": {Timeout: -1},
		"zero prefix":      {AllowPrivate: []netip.Prefix{{}}},
		"garbage PEM":      {ExtraCAPEM: []byte("not a certificate")},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig", name, err)
		}
	}
}

func TestRefusedErrorMessage(t *testing.T) {
	t.Parallel()
	err := error(refused(ReasonUserinfo, "no credentials", nil))
	if got := err.Error(); !strings.Contains(got, "userinfo") || !strings.Contains(got, "no credentials") {
		t.Errorf("Error() = %q", got)
	}
}
