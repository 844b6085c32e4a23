package config

import (
	"flag"
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
