package stack

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"

	"oficina/ops/config"
	"oficina/schema/secretbox"
	"oficina/schema/webhooks"
)

// ErrNoSecretKeys is a process that reads or writes webhook secrets
// started without OFICINA_SECRET_KEYS; its text says how to make one.
var ErrNoSecretKeys = errors.New(`OFICINA_SECRET_KEYS is required: webhook signing secrets are stored sealed with it.
Make a key ring and give the same value to every serve and dispatch process:
  export OFICINA_SECRET_KEYS="k1:$(openssl rand -base64 32)"
(docs/operating.md, "Secrets at rest")`)

// devKeysFile holds the key ring `oficina dev` generates.
const devKeysFile = "secret-keys"

// secretKeys returns the key ring of the webhook signing secrets:
// OFICINA_SECRET_KEYS, or in dev (embedded) a ring generated into
// <data-dir>/secret-keys (0600) on the first start and reused after.
func secretKeys(cfg config.Config, dev bool, out io.Writer) (*secretbox.Keyring, error) {
	text := cfg.SecretKeys
	if text == "" && dev {
		var err error
		if text, err = devSecretKeys(cfg.DataDir, out); err != nil {
			return nil, err
		}
	}
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("stack: %w", ErrNoSecretKeys)
	}
	ring, err := secretbox.ParseKeyring(text)
	if err != nil {
		return nil, fmt.Errorf("stack: OFICINA_SECRET_KEYS: %w", err)
	}
	return ring, nil
}

func devSecretKeys(dir string, out io.Writer) (string, error) {
	path := filepath.Join(dir, devKeysFile)
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("stack: read %s: %w", path, err)
	}
	key, err := secretbox.NewKey(rand.Reader)
	if err != nil {
		return "", fmt.Errorf("stack: %w", err)
	}
	text := "dev1:" + key
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("stack: %w", err)
	}
	// O_EXCL: two dev processes starting at once on one data dir do not
	// each write a key; the loser reads the winner's.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return devSecretKeys(dir, out)
	}
	if err != nil {
		return "", fmt.Errorf("stack: write %s: %w", path, err)
	}
	if _, err := f.WriteString(text + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("stack: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("stack: write %s: %w", path, err)
	}
	fmt.Fprintf(out, "webhook secret key ring written to %s (keep it: the secrets in the database open with it only)\n", path)
	return text, nil
}

// sealUnsealed seals the webhook secrets written before secrets were
// sealed (the one-time step of the sealing migration); it is idempotent,
// so every process runs it at start. only confines it like Options.Only.
func sealUnsealed(ctx context.Context, bdb *bun.DB, ring *secretbox.Keyring, only []string, log *slog.Logger) error {
	res, err := webhooks.Reseal(ctx, bdb, webhooks.ResealOptions{Ring: ring, UnsealedOnly: true, Companies: only})
	if err != nil {
		return fmt.Errorf("stack: seal webhook secrets: %w", err)
	}
	if res.Endpoints > 0 {
		log.Info("webhook secrets sealed", "endpoints", res.Endpoints, "companies", res.Companies, "key_id", ring.Primary())
	}
	for _, f := range res.Failed {
		log.Error("webhook secret not sealed", "company", f.CompanyID, "endpoint", f.EndpointID, "reason", f.Reason)
	}
	return nil
}
