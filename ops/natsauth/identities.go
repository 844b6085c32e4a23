package natsauth

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nkeys"
)

// Identities are NKey users made here, one per role of Roles (`oficina
// dev`, tests): the seeds stay with the clients, the server gets the
// public keys through Render.
type Identities map[string]nkeys.KeyPair

// Generate makes a fresh identity for every role.
func Generate() (Identities, error) {
	ids := Identities{}
	for _, r := range Roles() {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, fmt.Errorf("natsauth: %w", err)
		}
		ids[r.Name] = kp
	}
	return ids, nil
}

// PublicKeys maps each role to its public key, for Render.
func (ids Identities) PublicKeys() (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for role, kp := range ids {
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("natsauth: %s: %w", role, err)
		}
		out[role] = pub
	}
	return out, nil
}

// SeedFile is where Write keeps role's seed in dir (OFICINA_NATS_NKEY).
func SeedFile(dir, role string) string { return filepath.Join(dir, role+".nk") }

// ConfigFile is where Write keeps the server configuration in dir.
func ConfigFile(dir string) string { return filepath.Join(dir, "oficina.conf") }

// Write stores every seed (0600) and the server configuration with the
// public keys in dir (0700), replacing what was there.
func (ids Identities) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	for role, kp := range ids {
		seed, err := kp.Seed()
		if err != nil {
			return fmt.Errorf("natsauth: %s: %w", role, err)
		}
		if err := os.WriteFile(SeedFile(dir, role), append(seed, '\n'), 0o600); err != nil {
			return fmt.Errorf("natsauth: %w", err)
		}
	}
	keys, err := ids.PublicKeys()
	if err != nil {
		return err
	}
	if err := os.WriteFile(ConfigFile(dir), []byte(Render(keys)), 0o600); err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	return nil
}

// LoadOrGenerate reads the seeds Write left in dir, making those missing
// (a role added since), and writes everything back with the current
// configuration: the seeds a developer's tools use stay valid across
// restarts, and the permissions follow the code.
func LoadOrGenerate(dir string) (Identities, error) {
	fresh, err := Generate()
	if err != nil {
		return nil, err
	}
	for role := range fresh {
		b, err := os.ReadFile(SeedFile(dir, role))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("natsauth: %w", err)
		}
		kp, err := nkeys.FromSeed(bytes.TrimSpace(b))
		if err != nil {
			return nil, fmt.Errorf("natsauth: %s: %w", SeedFile(dir, role), err)
		}
		fresh[role] = kp
	}
	if err := fresh.Write(dir); err != nil {
		return nil, err
	}
	return fresh, nil
}
