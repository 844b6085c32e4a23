package natsauth_test

import (
	"maps"
	"os"
	"strings"
	"testing"

	"oficina/ops/natsauth"
)

// `oficina dev` restarted on the same data dir keeps its users' seeds (a
// developer's `nats --nkey` keeps working), makes a seed for a role it
// lacks, and rewrites the server configuration from the current source.
func TestDevSeedsSurviveARestartAndTheConfigurationFollowsTheSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := natsauth.LoadOrGenerate(dir)
	if err != nil {
		t.Fatal(err)
	}
	keys1, _ := first.PublicKeys()
	if err := os.Remove(natsauth.SeedFile(dir, natsauth.Relay)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(natsauth.ConfigFile(dir), []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	second, err := natsauth.LoadOrGenerate(dir)
	if err != nil {
		t.Fatal(err)
	}
	keys2, _ := second.PublicKeys()
	if keys2[natsauth.Relay] == keys1[natsauth.Relay] || keys2[natsauth.Relay] == "" {
		t.Fatal("the missing relay seed was not made anew")
	}
	delete(keys1, natsauth.Relay)
	delete(keys2, natsauth.Relay)
	if !maps.Equal(keys1, keys2) {
		t.Fatal("seeds changed across a restart")
	}
	conf, err := os.ReadFile(natsauth.ConfigFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	all, _ := second.PublicKeys()
	if string(conf) != natsauth.Render(all) || !strings.Contains(string(conf), all[natsauth.API]) {
		t.Fatal("configuration not rewritten from the source with the users' public keys")
	}
}
