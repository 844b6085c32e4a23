package dispatch_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"oficina/dispatch"
	"oficina/dispatch/destguard"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// matrixPublicV4 stands for a public address a name may resolve to.
const matrixPublicV4 = "93.184.215.14"

// matrixDNS is what the resolvers answer. Registration and delivery use
// different tables only for rebind.dest-matrix.com, which is public when
// the endpoint is registered and loopback when it is delivered to.
func matrixDNS(delivery bool) map[string][]string {
	m := map[string][]string{
		"hooks.dest-matrix.com":    {matrixPublicV4},
		"private.dest-matrix.com":  {"10.0.0.1"},
		"loopback.dest-matrix.com": {"127.0.0.1"},
		"metadata.dest-matrix.com": {"169.254.169.254"},
		"ula.dest-matrix.com":      {"fd00::1"},
		"mapped.dest-matrix.com":   {"::ffff:127.0.0.1"},
		"nat64.dest-matrix.com":    {"64:ff9b::7f00:1"},
		"mixed.dest-matrix.com":    {matrixPublicV4, "10.0.0.1"},
		"cgnat.dest-matrix.com":    {"100.64.0.1"},
		"127.0.0.1.nip.io":         {"127.0.0.1"},
		"rebind.dest-matrix.com":   {matrixPublicV4},
		"allowed.dest-matrix.com":  {"127.0.0.1"}, // allowed receiver, certificate for another name
	}
	if delivery {
		m["rebind.dest-matrix.com"] = []string{"127.0.0.1"}
	}
	return m
}

// matrixResolver answers from a table; unknown names do not resolve.
type matrixResolver map[string][]string

func (r matrixResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	addrs, ok := r[strings.TrimSuffix(host, ".")]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
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
}

// destCase is one hostile webhook URL: what registration through the
// public API answers and why the dispatcher refuses to deliver.
type destCase struct {
	rule string
	url  string // {port} is the port of the group's loopback receiver
	// registered: registration is accepted (the URL is fine when
	// registered; only delivery can tell); otherwise it is 422, param url,
	// with the code registrationCodes gives the reason.
	registered bool
	reason     string // the delivery's and the attempt's error
	status     int    // the receiver's answer recorded with it (redirects)
}

const (
	refusedPrivate   = "destination_refused: private_address"
	refusedName      = "destination_refused: forbidden_hostname"
	refusedNumeric   = "destination_refused: noncanonical_ip"
	refusedScheme    = "destination_refused: not_https"
	refusedUserinfo  = "destination_refused: userinfo"
	refusedPort      = "destination_refused: invalid_port"
	refusedInvalid   = "destination_refused: invalid_url"
	refusedHostname  = "destination_refused: invalid_hostname"
	failedDNS        = "dns_error"
	failedRedirect   = "redirect_not_followed"
	failedUnknownCA  = "tls_error: unknown_authority"
	failedOtherName  = "tls_error: hostname_mismatch"
	failedExpiredTLS = "tls_error: certificate_expired"
)

// registrationCodes are the errors[].code of param url that a refusal at
// registration names (spec 4.6, 6.5; docs/api.md): the cause the
// integrator has to fix, for each reason the delivery log records.
var registrationCodes = map[string]string{
	refusedPrivate:  "not_public",
	refusedName:     "not_public",
	failedDNS:       "unresolvable",
	refusedScheme:   "not_https",
	refusedUserinfo: "userinfo",
	refusedNumeric:  "invalid_url",
	refusedPort:     "invalid_url",
	refusedInvalid:  "invalid_url",
	refusedHostname: "invalid_url",
}

// strictCases run against the production settings (no address allowed
// beyond the public ones): each URL points, where it can, at a loopback
// receiver that must never be reached.
var strictCases = []destCase{
	// Loopback, however it is written.
	{rule: "loopback", url: "https://127.0.0.1:{port}/hook", reason: refusedPrivate},
	{rule: "loopback, top of 127/8", url: "https://127.255.255.254:{port}/", reason: refusedPrivate},
	{rule: "IPv6 loopback", url: "https://[::1]:{port}/", reason: refusedPrivate},
	{rule: "localhost", url: "https://localhost:{port}/", reason: refusedName},
	{rule: "localhost, upper case and trailing dot", url: "https://LOCALHOST.:{port}/", reason: refusedName},
	{rule: "0.0.0.0 (reaches loopback on Linux)", url: "https://0.0.0.0:{port}/", reason: refusedPrivate},
	{rule: "IPv6 unspecified", url: "https://[::]:{port}/", reason: refusedPrivate},
	// Decimal, octal and hexadecimal spellings of 127.0.0.1.
	{rule: "decimal IPv4", url: "https://2130706433:{port}/", reason: refusedNumeric},
	{rule: "octal IPv4", url: "https://0177.0.0.1:{port}/", reason: refusedNumeric},
	{rule: "octal IPv4, one number", url: "https://017700000001:{port}/", reason: refusedNumeric},
	{rule: "hexadecimal IPv4", url: "https://0x7f.0.0.1:{port}/", reason: refusedNumeric},
	{rule: "hexadecimal IPv4, one number", url: "https://0x7f000001:{port}/", reason: refusedNumeric},
	{rule: "short IPv4", url: "https://127.1:{port}/", reason: refusedNumeric},
	// IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms.
	{rule: "IPv4-mapped loopback", url: "https://[::ffff:127.0.0.1]:{port}/", reason: refusedPrivate},
	{rule: "IPv4-mapped loopback, hex", url: "https://[::ffff:7f00:1]:{port}/", reason: refusedPrivate},
	{rule: "IPv4-mapped metadata", url: "https://[::ffff:169.254.169.254]/", reason: refusedPrivate},
	{rule: "IPv4-compatible loopback", url: "https://[::127.0.0.1]:{port}/", reason: refusedPrivate},
	{rule: "NAT64 of loopback", url: "https://[64:ff9b::7f00:1]:{port}/", reason: refusedPrivate},
	{rule: "NAT64 of metadata", url: "https://[64:ff9b::a9fe:a9fe]/", reason: refusedPrivate},
	{rule: "local-use NAT64 of 10.0.0.1", url: "https://[64:ff9b:1::a00:1]/", reason: refusedPrivate},
	{rule: "6to4 of loopback", url: "https://[2002:7f00:1::1]/", reason: refusedPrivate},
	// Private and reserved ranges.
	{rule: "RFC 1918 10/8", url: "https://10.0.0.1/", reason: refusedPrivate},
	{rule: "RFC 1918 172.16/12", url: "https://172.16.0.1/", reason: refusedPrivate},
	{rule: "RFC 1918 192.168/16", url: "https://192.168.1.1/", reason: refusedPrivate},
	{rule: "shared address space 100.64/10", url: "https://100.64.0.1/", reason: refusedPrivate},
	{rule: "benchmarking 198.18/15", url: "https://198.18.0.1/", reason: refusedPrivate},
	{rule: "reserved 240/4", url: "https://240.0.0.1/", reason: refusedPrivate},
	{rule: "broadcast", url: "https://255.255.255.255/", reason: refusedPrivate},
	{rule: "multicast", url: "https://224.0.0.1/", reason: refusedPrivate},
	{rule: "IPv6 unique local", url: "https://[fc00::1]/", reason: refusedPrivate},
	{rule: "IPv6 multicast", url: "https://[ff02::1]/", reason: refusedPrivate},
	// Link-local and cloud metadata, v4 and v6.
	{rule: "link-local / metadata (AWS, GCP, Azure)", url: "https://169.254.169.254/latest/meta-data/", reason: refusedPrivate},
	{rule: "IPv6 link-local", url: "https://[fe80::1]/", reason: refusedPrivate},
	{rule: "IPv6 link-local with zone", url: "https://[fe80::1%25eth0]/", reason: refusedPrivate},
	{rule: "metadata v6 (AWS)", url: "https://[fd00:ec2::254]/latest/meta-data/", reason: refusedPrivate},
	{rule: "metadata (Alibaba)", url: "https://100.100.100.200/latest/meta-data/", reason: refusedPrivate},
	{rule: "metadata (Oracle)", url: "https://192.0.0.192/opc/v2/instance/", reason: refusedPrivate},
	{rule: "Azure WireServer", url: "https://168.63.129.16/", reason: refusedPrivate},
	{rule: "metadata name (GCP)", url: "https://metadata.google.internal/computeMetadata/v1/", reason: refusedName},
	{rule: "cluster DNS name", url: "https://kubernetes.default.svc/", reason: refusedName},
	{rule: "mDNS name", url: "https://printer.local/", reason: refusedName},
	{rule: "single-label name", url: "https://intranet:{port}/", reason: refusedName},
	// DNS names that resolve to addresses that are not public.
	{rule: "name resolving to 10.0.0.1", url: "https://private.dest-matrix.com/", reason: refusedPrivate},
	{rule: "name resolving to loopback", url: "https://loopback.dest-matrix.com:{port}/", reason: refusedPrivate},
	{rule: "name resolving to metadata", url: "https://metadata.dest-matrix.com/", reason: refusedPrivate},
	{rule: "name resolving to IPv6 unique local", url: "https://ula.dest-matrix.com/", reason: refusedPrivate},
	{rule: "name resolving to IPv4-mapped loopback", url: "https://mapped.dest-matrix.com:{port}/", reason: refusedPrivate},
	{rule: "name resolving to NAT64 of loopback", url: "https://nat64.dest-matrix.com:{port}/", reason: refusedPrivate},
	{rule: "name resolving to a public and a private address", url: "https://mixed.dest-matrix.com/", reason: refusedPrivate},
	{rule: "name resolving to 100.64/10", url: "https://cgnat.dest-matrix.com/", reason: refusedPrivate},
	{rule: "wildcard DNS service (127.0.0.1.nip.io)", url: "https://127.0.0.1.nip.io:{port}/", reason: refusedPrivate},
	{rule: "name that does not resolve", url: "https://nxdomain.dest-matrix.com/", reason: failedDNS},
	// DNS rebinding: public at registration, loopback at delivery.
	{rule: "DNS rebinding", url: "https://rebind.dest-matrix.com:{port}/", registered: true, reason: refusedPrivate},
	// Scheme, user information, port and shape.
	{rule: "http://", url: "http://hooks.dest-matrix.com/", reason: refusedScheme},
	{rule: "http:// to loopback", url: "http://127.0.0.1:{port}/", reason: refusedScheme},
	{rule: "ftp://", url: "ftp://hooks.dest-matrix.com/", reason: refusedScheme},
	{rule: "file://", url: "file:///etc/passwd", reason: refusedScheme},
	{rule: "user:password", url: "https://user:pass@hooks.dest-matrix.com/", reason: refusedUserinfo},
	{rule: "user@ hiding the real host", url: "https://hooks.dest-matrix.com@127.0.0.1:{port}/", reason: refusedUserinfo},
	{rule: "port 0", url: "https://hooks.dest-matrix.com:0/", reason: refusedPort},
	{rule: "port 65536", url: "https://hooks.dest-matrix.com:65536/", reason: refusedPort},
	{rule: "no host", url: "https:///hook", reason: refusedInvalid},
	{rule: "non-ASCII host (homograph)", url: "https://hооks.dest-matrix.com/", reason: refusedHostname},
}

// allowedCases need a receiver to answer, so their loopback receivers are
// allowed through the explicit settings (AllowPrivate 127.0.0.1/32, the
// test CA trusted), as a development setup would: registration accepts
// them and only the delivery can refuse.
func allowedCases(redirector, selfSigned, expired *httptest.Server) []destCase {
	var out []destCase
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		out = append(out, destCase{rule: fmt.Sprintf("redirect %d to a loopback receiver", code),
			url: fmt.Sprintf("%s/redirect/%d", redirector.URL, code), registered: true, reason: failedRedirect, status: code})
	}
	return append(out,
		destCase{rule: "self-signed certificate", url: selfSigned.URL + "/hook", registered: true, reason: failedUnknownCA},
		destCase{rule: "certificate for another name", url: "https://allowed.dest-matrix.com:" + port(redirector) + "/hook",
			registered: true, reason: failedOtherName},
		destCase{rule: "expired certificate", url: expired.URL + "/hook", registered: true, reason: failedExpiredTLS})
}

// Spec 6.5 and issue 9: hostile webhook URLs are refused when registered
// through the public API (422, param url, its code naming the cause) and, inserted anyway, when the
// dispatcher delivers: the attempt fails with the guard's reason and no
// loopback receiver is reached. The few a registration cannot judge (a
// name that rebinds, a redirect, a certificate) are refused at delivery.
func TestDestinationMatrixRefusedAtRegistrationAndDelivery(t *testing.T) {
	t.Parallel()
	var rows []string
	total := 0

	t.Run("production settings", func(t *testing.T) {
		var hits atomic.Int32
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
		t.Cleanup(srv.Close)
		reg := matrixGuard(t, destguard.Config{Resolver: matrixResolver(matrixDNS(false))})
		del := matrixGuard(t, destguard.Config{Resolver: matrixResolver(matrixDNS(true)), Timeout: 5 * time.Second})
		cases := make([]destCase, len(strictCases))
		for i, c := range strictCases {
			c.url = strings.ReplaceAll(c.url, "{port}", port(srv))
			cases[i] = c
		}
		rows = append(rows, runMatrix(t, reg, del, cases)...)
		if n := hits.Load(); n != 0 {
			t.Errorf("the loopback receiver got %d requests, want none", n)
		}
		total += len(cases)
	})

	t.Run("receivers allowed explicitly", func(t *testing.T) {
		var targetHits, selfSignedHits atomic.Int32
		target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { targetHits.Add(1) }))
		t.Cleanup(target.Close)
		redirector := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var code int
			_, _ = fmt.Sscanf(r.URL.Path, "/redirect/%d", &code)
			http.Redirect(w, r, target.URL+"/stolen", code)
		}))
		t.Cleanup(redirector.Close)
		selfSigned := matrixTLSServer(t, time.Now().Add(time.Hour), &selfSignedHits)
		expired := matrixTLSServer(t, time.Now().Add(-time.Hour), &selfSignedHits)
		trusted := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: target.Certificate().Raw}),
			pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: expired.Certificate().Raw})...)
		allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		reg := matrixGuard(t, destguard.Config{Resolver: matrixResolver(matrixDNS(false)), AllowPrivate: allow})
		del := matrixGuard(t, destguard.Config{Resolver: matrixResolver(matrixDNS(true)), AllowPrivate: allow, ExtraCAPEM: trusted,
			Timeout: 5 * time.Second})
		cases := allowedCases(redirector, selfSigned, expired)
		rows = append(rows, runMatrix(t, reg, del, cases)...)
		if n := targetHits.Load(); n != 0 {
			t.Errorf("the redirect target got %d requests, want none", n)
		}
		if n := selfSignedHits.Load(); n != 0 {
			t.Errorf("receivers with a refused certificate got %d requests, want none", n)
		}
		total += len(cases)
	})

	t.Logf("destination matrix: %d hostile URLs\n| rule | URL | registration | delivery |\n|---|---|---|---|\n%s",
		total, strings.Join(rows, "\n"))
	if total < 40 {
		t.Errorf("the matrix has %d URLs, want at least 40", total)
	}
}

// runMatrix registers every URL through the public API with reg, inserts
// the endpoints anyway, delivers one event to each with a dispatcher whose
// client is del's, and checks both refusals. It returns a table row per
// case.
func runMatrix(t *testing.T, reg, del *destguard.Guard, cases []destCase) []string {
	t.Helper()
	api := httpkit.NewAPI(t, httpkit.APIOptions{Destinations: reg})
	regCo := testkit.NewCompany(t, tenant.CompanyInput{})
	key := regCo.OwnerKey(t, "webhooks:create", "sales:read")
	regAnswers := make([]*httpkit.Response, len(cases))
	for i, c := range cases {
		regAnswers[i] = api.Do(t, httpkit.Req{Method: "POST", Path: "/webhook_endpoints", Key: key,
			Body: map[string]any{"url": c.url, "events": []string{"sale.paid"}}})
	}

	// Delivery: the endpoints go in without registration's check, at most
	// 20 a company (the plan's endpoint limit is 25).
	e := newEnv(t)
	e.start(t, dispatch.Config{Client: del.Client(), Schedule: []time.Duration{time.Hour}})
	type sent struct {
		co *testkit.Company
		dm streams.DeliveryMessage
	}
	var co *testkit.Company
	out := make([]sent, len(cases))
	for i, c := range cases {
		if i%20 == 0 {
			co = company(t, tenant.PlanSupra)
		}
		ep := newEndpoint(t, co, c.url, webhooks.Subscriber{MemberID: co.Owner.ID})
		out[i] = sent{co: co, dm: e.enqueue(t, co, ep, "sale.paid")}
	}

	rows := make([]string, len(cases))
	for i, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			r := regAnswers[i]
			var regResult string
			if c.registered {
				if r.Status != http.StatusCreated {
					t.Errorf("registration: %d %s, want 201 (only the delivery can tell)", r.Status, r.Raw)
				}
				regResult = "201, accepted"
			} else {
				param, code := firstFieldError(r)
				want := registrationCodes[c.reason]
				if r.Status != http.StatusUnprocessableEntity || r.ErrorCode() != "validation_failed" || param != "url" || code != want {
					t.Errorf("registration: %d %s, want 422 validation_failed on url (%s)", r.Status, r.Raw, want)
				}
				regResult = fmt.Sprintf("%d %s", r.Status, code)
			}

			d := waitFor(t, out[i].co, out[i].dm.DeliveryID, func(d streams.Delivery) bool { return d.AttemptCount >= 1 })
			as := attempts(t, out[i].co, out[i].dm.DeliveryID)
			if d.Status == streams.StatusSucceeded || ptrStr(d.Error) != c.reason || len(as) != 1 || ptrStr(as[0].Error) != c.reason {
				var got string
				if len(as) > 0 {
					got = ptrStr(as[0].Error)
				}
				t.Errorf("delivery %s, error %q, %d attempts (first: %q); want the attempt refused with %q",
					d.Status, ptrStr(d.Error), len(as), got, c.reason)
			}
			if c.status != 0 && (d.ResponseStatusCode == nil || *d.ResponseStatusCode != c.status) {
				t.Errorf("response status %v, want %d", d.ResponseStatusCode, c.status)
			}
			rows[i] = fmt.Sprintf("| %s | `%s` | %s | %s |", c.rule, c.url, regResult, c.reason)
		})
	}
	return rows
}

func firstFieldError(r *httpkit.Response) (param, code string) {
	env, _ := r.Body["error"].(map[string]any)
	list, _ := env["errors"].([]any)
	if len(list) == 0 {
		return "", ""
	}
	m, _ := list[0].(map[string]any)
	param, _ = m["param"].(string)
	code, _ = m["code"].(string)
	return param, code
}

func matrixGuard(t *testing.T, cfg destguard.Config) *destguard.Guard {
	t.Helper()
	g, err := destguard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func port(srv *httptest.Server) string {
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	return p
}

// matrixTLSServer is a loopback HTTPS receiver with a certificate of its
// own (self-signed, valid until notAfter) that counts what reaches it.
func matrixTLSServer(t *testing.T, notAfter time.Time, hits *atomic.Int32) *httptest.Server {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "hostile receiver"},
		NotBefore:    notAfter.Add(-48 * time.Hour),
		NotAfter:     notAfter,
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	if srv.Certificate() == nil {
		t.Fatal(errors.New("receiver without certificate"))
	}
	return srv
}
