package stack

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oficina/ops/config"
	"oficina/ops/testkit"
	"oficina/schema/secretbox"
)

// `serve` and `dispatch` read and write webhook secrets: without
// OFICINA_SECRET_KEYS they refuse to start, saying how to make a ring,
// before touching the database or NATS; a malformed ring is refused
// without echoing it.
func TestServeAndDispatchRefuseToStartWithoutSecretKeys(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DatabaseURL = "postgres://nobody@127.0.0.1:1/none?sslmode=disable" // never reached
	cfg.NATSURL = "nats://127.0.0.1:1"
	cfg.AdminToken = "a-token-that-is-long-enough-for-the-admin-api"
	cfg.DataDir = t.TempDir()
	ctx := context.Background()
	for name, run := range map[string]func(Options) error{
		"serve":    func(o Options) error { return Run(ctx, o) },
		"dispatch": func(o Options) error { return RunDispatch(ctx, o) },
	} {
		err := run(Options{Config: cfg})
		if !errors.Is(err, ErrNoSecretKeys) || !strings.Contains(err.Error(), "openssl rand -base64 32") {
			t.Errorf("%s without keys: %v", name, err)
		}
		bad := cfg
		bad.SecretKeys = "+8byEbbmxPZWXOJY54pmU/pZIZsiFIqVMXgUEFCt3/U=" // a key without its id
		err = run(Options{Config: bad})
		if !errors.Is(err, secretbox.ErrKeyring) || strings.Contains(err.Error(), bad.SecretKeys) ||
			!strings.Contains(err.Error(), "OFICINA_SECRET_KEYS") {
			t.Errorf("%s with a bare key: %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(cfg.DataDir); len(entries) != 0 {
		t.Errorf("serve wrote a key ring into its data dir: %v", entries)
	}
}

// `oficina dev` needs no setting: it generates a ring into its data dir
// (0600) on the first start and reuses it after, so its secrets keep
// opening; OFICINA_SECRET_KEYS, when set, wins.
func TestDevGeneratesItsSecretKeyOnceAndReusesIt(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DataDir = filepath.Join(t.TempDir(), "var")
	var out bytes.Buffer
	first, err := secretKeys(cfg, true, &out)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cfg.DataDir, devKeysFile)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || !strings.Contains(out.String(), path) {
		t.Fatalf("key file: %v %v; printed %q", st, err, out.String())
	}
	id, sealed, err := first.Seal([]byte("whsec_x"), []byte("row"))
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	again, err := secretKeys(cfg, true, &out)
	if err != nil || out.Len() != 0 {
		t.Fatalf("second start: %v, printed %q", err, out.String())
	}
	if got, err := again.Open(id, sealed, []byte("row")); err != nil || string(got) != "whsec_x" {
		t.Fatalf("the second start's ring does not open the first's values: %v", err)
	}
	cfg.SecretKeys = testkit.SecretKeys
	if set, err := secretKeys(cfg, true, &out); err != nil || set.Primary() != "test" {
		t.Fatalf("OFICINA_SECRET_KEYS in dev: %v %v", set, err)
	}
}
