package config

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestEnvironmentThenFlagsOverrideDefaults(t *testing.T) {
	t.Parallel()
	c := Default()
	env := map[string]string{"OFICINA_HTTP_ADDR": ":9090", "OFICINA_AUTH_CACHE_TTL": "2s", "DATABASE_URL": "postgres://x/y"}
	if err := c.Load(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.Register(fs)
	if err := fs.Parse([]string{"-http-addr", ":7070"}); err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != ":7070" || c.AuthCacheTTL != 2*time.Second || c.DatabaseURL != "postgres://x/y" || c.AdminAddr != "127.0.0.1:8081" {
		t.Fatalf("%+v", c)
	}
	bad := Default()
	if err := bad.Load(func(k string) string { return map[string]string{"OFICINA_DB_MAX_CONNS": "many"}[k] }); err == nil {
		t.Fatal("bad integer accepted")
	}
}

// Issue 15 item 1: starting with the removed OFICINA_TRUST_PROXY is an
// error that names its replacement, not a silent change of behaviour.
func TestRemovedTrustProxyNamesItsReplacement(t *testing.T) {
	t.Parallel()
	c := Default()
	err := c.Load(func(k string) string { return map[string]string{"OFICINA_TRUST_PROXY": "true"}[k] })
	if err == nil || !strings.Contains(err.Error(), "OFICINA_TRUSTED_PROXIES") {
		t.Fatalf("got %v", err)
	}
}

func TestPrefixesTakeCIDRsAndBareAddresses(t *testing.T) {
	t.Parallel()
	ps, err := Prefixes("X", " 10.0.0.0/8, 192.0.2.7 ,2001:db8::1,, ")
	if err != nil || len(ps) != 3 || ps[1].String() != "192.0.2.7/32" || ps[2].String() != "2001:db8::1/128" {
		t.Fatalf("%v %v", ps, err)
	}
	if _, err := Prefixes("X", "10.0.0.0/33"); err == nil {
		t.Fatal("bad prefix accepted")
	}
}
