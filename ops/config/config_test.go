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

// Issue 15 item 5: every process reads its NATS identity and TLS from
// OFICINA_NATS_* (or flags), refuses two identities at once, and never
// shows a secret: not in -h, not in a redacted NATS_URL.
func TestNATSSettingsLoadAndKeepTheirSecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OFICINA_NATS_USER": "api", "OFICINA_NATS_PASSWORD": "pw-from-env", "OFICINA_NATS_CA": "/ca.pem",
		"OFICINA_NATS_SERVER_NAME": "nats.internal", "OFICINA_NATS_INBOX_PREFIX": "_INBOX.api2"}
	c := Default()
	if err := c.Load(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	var help strings.Builder
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(&help)
	c.Register(fs)
	fs.PrintDefaults()
	if err := fs.Parse([]string{"-nats-cert", "/c.pem", "-nats-key", "/k.pem"}); err != nil {
		t.Fatal(err)
	}
	want := NATS{User: "api", Password: "pw-from-env", CAFile: "/ca.pem", CertFile: "/c.pem", KeyFile: "/k.pem",
		ServerName: "nats.internal", InboxPrefix: "_INBOX.api2"}
	if c.NATS != want || c.NATS.Validate() != nil || !c.NATS.TLS() {
		t.Fatalf("%+v (%v)", c.NATS, c.NATS.Validate())
	}
	if strings.Contains(help.String(), "pw-from-env") || !strings.Contains(help.String(), "OFICINA_NATS_CREDS") {
		t.Fatalf("-h output:\n%s", help.String())
	}
	if err := (NATS{Token: "t", CredsFile: "x.creds"}).Validate(); err == nil {
		t.Fatal("two identities accepted")
	}
	got := RedactURLs("nats://api:pw-in-url@n1:4222, nats://tok-in-url@n2:4222,nats://n3:4222")
	if strings.Contains(got, "pw-in-url") || strings.Contains(got, "tok-in-url") || !strings.Contains(got, "n3:4222") {
		t.Fatalf("redacted %q", got)
	}
}

// OFICINA_SECRET_KEYS is read from the environment only: a flag's value
// would show in the process list and as the default in -h.
func TestSecretKeysFromTheEnvironmentOnly(t *testing.T) {
	t.Parallel()
	const ring = "k1:+8byEbbmxPZWXOJY54pmU/pZIZsiFIqVMXgUEFCt3/U="
	c := Default()
	if err := c.Load(func(k string) string { return map[string]string{"OFICINA_SECRET_KEYS": ring}[k] }); err != nil {
		t.Fatal(err)
	}
	var help strings.Builder
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(&help)
	c.Register(fs)
	fs.PrintDefaults()
	if c.SecretKeys != ring || strings.Contains(help.String(), ring) || fs.Lookup("secret-keys") != nil {
		t.Fatalf("keys %q; help shows them or a flag exists:\n%s", c.SecretKeys, help.String())
	}
	if err := fs.Parse([]string{"-secret-keys", ring}); err == nil {
		t.Fatal("a -secret-keys flag was accepted")
	}
}
