package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/config"
	"oficina/ops/stack"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/schema/db"
)

// Secrets at rest, end to end on a database of its own: after every way a
// webhook secret is made, used or replayed (creation and rotation with and
// without Idempotency-Key, pings, deliveries of writes with and without
// one), no table holds a secret or the key that seals them — every column
// of every row read as the owner — and neither does the JetStream store.
// Then the documented key rotation: put a new key first, restart, `oficina
// admin secrets rekey`, drop the old key, restart; deliveries are still
// signed with each endpoint's secrets and verify with the Standard Webhooks
// library.
func TestNoSecretAtRestAndKeyRotation(t *testing.T) {
	t.Parallel()
	ownerURL := testkit.ScratchDB(t, "sealed")
	a, b := newHookReceiver(t), newHookReceiver(t)
	dir := t.TempDir()
	caFile := filepath.Join(dir, "receivers.pem")
	if err := os.WriteFile(caFile, append(a.pem(), b.pem()...), 0o600); err != nil {
		t.Fatal(err)
	}
	k1, k2 := testkit.NewKeyEntry(t, "k1"), testkit.NewKeyEntry(t, "k2")
	dev := devProcess{t: t, ownerURL: ownerURL, dataDir: filepath.Join(dir, "data"), caFile: caFile}

	// 1. Every path a secret takes, under k1.
	p := dev.start(k1, "")
	// a's endpoint sits behind a gateway: a custom header, a secret too.
	// and OAuth2 client credentials, whose secret is sealed as well.
	const apiKeyHeader, oauthSecret = "gw-key-0123456789abcdef-sealed", "oauth-client-secret-0123456789-sealed"
	tokens := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"tok","token_type":"bearer","expires_in":3600}`))
	}))
	t.Cleanup(tokens.Close)
	ea := p.call(http.StatusCreated, "POST", "/webhook_endpoints", "", map[string]any{"url": a.srv.URL + "/hook", "events": []string{"*"},
		"headers": map[string]string{"x-api-key": apiKeyHeader},
		"oauth2":  map[string]string{"token_url": tokens.URL + "/token", "client_id": "oficina", "client_secret": oauthSecret}})
	a.header = [2]string{"X-Api-Key", apiKeyHeader}
	// b's endpoint has a client certificate (mutual TLS): its key is a
	// secret too.
	certPEM, keyPEM, _ := testkit.ClientCertificate(t, "sealed-client", time.Now().Add(24*time.Hour))
	idem := map[string]any{"url": b.srv.URL + "/hook", "events": []string{"*"},
		"client_certificate": map[string]string{"certificate": certPEM, "private_key": keyPEM}}
	keyBody := strings.Join(strings.Split(strings.TrimSpace(keyPEM), "\n")[1:2], "")
	eb := p.call(http.StatusCreated, "POST", "/webhook_endpoints", "create-b", idem)
	if replay := p.call(http.StatusCreated, "POST", "/webhook_endpoints", "create-b", idem); replay["secret"] != nil {
		t.Fatal("a replayed creation shows the secret")
	}
	a.secrets = []string{p.call(http.StatusOK, "POST", "/webhook_endpoints/"+id(ea)+"/rotate_secret", "",
		map[string]any{"grace_period_seconds": 3600})["secret"].(string), ea["secret"].(string)}
	b.secrets = []string{p.call(http.StatusOK, "POST", "/webhook_endpoints/"+id(eb)+"/rotate_secret", "rotate-b", nil)["secret"].(string),
		eb["secret"].(string)}
	if replay := p.call(http.StatusOK, "POST", "/webhook_endpoints/"+id(eb)+"/rotate_secret", "rotate-b", nil); replay["secret"] != nil {
		t.Fatal("a replayed rotation shows the secret")
	}
	p.call(http.StatusAccepted, "POST", "/webhook_endpoints/"+id(ea)+"/ping", "", nil)
	p.call(http.StatusAccepted, "POST", "/webhook_endpoints/"+id(eb)+"/ping", "ping-b", nil)
	p.call(http.StatusCreated, "POST", "/leads", "", lead("sem-chave"))
	p.call(http.StatusCreated, "POST", "/leads", "lead-2", lead("com-chave"))
	a.verify(t, 3) // its ping and two client.created, signed with both secrets
	b.verify(t, 3)
	secrets := append(append([]string{}, a.secrets...), b.secrets...)
	p.settle(ownerURL)
	p.stop()
	scan(t, ownerURL, dev.dataDir, secrets, []string{k1}, apiKeyHeader, keyBody, oauthSecret)

	// 2. A new key first: everything still opens; rekey moves every row.
	p = dev.start(k2+","+k1, p.key)
	var out bytes.Buffer
	rekey := []string{"admin", "-admin-url", "http://" + p.admin, "-admin-token", devAdminToken, "secrets", "rekey"}
	if err := run(context.Background(), rekey, &out, &out); err != nil {
		t.Fatalf("rekey: %v\n%s", err, out.String())
	}
	if got := strings.TrimSpace(out.String()); got != "2 endpoint(s) of 1 company(ies) re-sealed under key k2" {
		t.Fatalf("rekey printed %q", got)
	}
	var keyIDs []string
	owner := openOwner(t, ownerURL)
	if err := owner.NewRaw("SELECT DISTINCT coalesce(secret_key_id, 'NULL') FROM webhook_endpoints").Scan(context.Background(), &keyIDs); err != nil {
		t.Fatal(err)
	}
	if strings.Join(keyIDs, ",") != "k2" {
		t.Fatalf("key ids after rekey: %v", keyIDs)
	}
	out.Reset()
	if err := run(context.Background(), rekey, &out, &out); err != nil || !strings.HasPrefix(out.String(), "0 endpoint(s)") {
		t.Fatalf("second rekey: %v %s", err, out.String())
	}
	p.stop()

	// 3. The old key dropped: deliveries are signed as before.
	p = dev.start(k2, p.key)
	p.call(http.StatusAccepted, "POST", "/webhook_endpoints/"+id(ea)+"/ping", "", nil)
	p.call(http.StatusCreated, "POST", "/leads", "lead-3", lead("depois"))
	a.verify(t, 2)
	b.verify(t, 1)
	p.settle(ownerURL)
	p.stop()
	scan(t, ownerURL, dev.dataDir, secrets, []string{k1, k2}, apiKeyHeader, keyBody, oauthSecret)
}

const devAdminToken = "secrets-test-admin-token-0123456789abcdef"

// devProcess starts `oficina dev` (stack.Run, embedded NATS) on the test's
// database and data directory; the first start seeds the demo company.
type devProcess struct {
	t                         *testing.T
	ownerURL, dataDir, caFile string
}

type runningDev struct {
	t             *testing.T
	public, admin string
	key           string // the demo owner's API key, every permission
	stop          func()
}

var seededKey = regexp.MustCompile(`(?m)^API key \(.*\):\n  (ofk_\S+)$`)

// start runs dev with the key ring secretKeys; key "" seeds the demo
// company and takes its printed key (later starts pass it and do not seed).
func (d devProcess) start(secretKeys, key string) *runningDev {
	t := d.t
	t.Helper()
	cfg := config.Default()
	cfg.DatabaseURL = d.ownerURL
	cfg.HTTPAddr, cfg.AdminAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.NATSPort = -1
	cfg.DataDir = d.dataDir
	cfg.AdminToken = devAdminToken
	cfg.SecretKeys = secretKeys
	cfg.AllowPrivateDestinations = "127.0.0.1/32"
	cfg.ExtraCAFile = d.caFile
	var out, logs testkit.SyncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dev log (keys %s…):\n%s", secretKeys[:2], logs.String())
		}
	})
	ready := make(chan stack.Addrs, 1)
	r := &runningDev{t: t}
	var exited <-chan error
	r.stop, exited = testkit.Stoppable(t, "dev", func(ctx context.Context) error {
		return stack.Run(ctx, stack.Options{Config: cfg, Embedded: true, Seed: key == "", Out: &out,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)), Ready: func(a stack.Addrs) { ready <- a }})
	})
	select {
	case a := <-ready:
		r.public, r.admin = a.Public, a.Admin
	case err := <-exited:
		t.Fatalf("dev: %v\n%s", err, out.String())
	case <-time.After(60 * time.Second):
		t.Fatal("dev not ready")
	}
	r.key = key
	if key == "" {
		m := seededKey.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no seeded key in %q", out.String())
		}
		r.key = m[1]
	}
	return r
}

// settle waits until no delivery is pending: every send recorded before
// the process stops (a send not recorded yet would come again after the
// restart).
func (r *runningDev) settle(ownerURL string) {
	r.t.Helper()
	owner := openOwner(r.t, ownerURL)
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := owner.NewSelect().Table("webhook_deliveries").Where("status = 'pending'").Count(context.Background())
		if err != nil {
			r.t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d deliveries still pending", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call sends a public API request (with an Idempotency-Key unless "") and
// wants status.
func (r *runningDev) call(status int, method, path, idemKey string, body any) map[string]any {
	t := r.t
	t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, "http://"+r.public+"/public/v1"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, status)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

func id(m map[string]any) string { return m["id"].(string) }

// hookReceiver is a TLS webhook receiver for one endpoint and the secrets
// its deliveries must carry a signature of.
type hookReceiver struct {
	srv     *httptest.Server
	got     chan testkit.Received
	secrets []string
	header  [2]string // a custom header every delivery must carry (name, value), if any
}

func newHookReceiver(t *testing.T) *hookReceiver {
	srv, got := testkit.Receiver(t, testkit.Status(http.StatusNoContent))
	return &hookReceiver{srv: srv, got: got}
}

func (h *hookReceiver) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
}

// verify waits for n deliveries and checks each carries a valid Standard
// Webhooks signature for every one of the endpoint's secrets.
func (h *hookReceiver) verify(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case r := <-h.got:
			for _, s := range h.secrets {
				if err := hooks.Verify(s, r); err != nil {
					t.Errorf("delivery %s: not signed with the secret %s…: %v", r.Header.Get("webhook-id"), s[:10], err)
				}
			}
			if h.header[0] != "" && r.Header.Get(h.header[0]) != h.header[1] {
				t.Errorf("delivery %s: %s %q, want the endpoint's custom header", r.Header.Get("webhook-id"), h.header[0], r.Header.Get(h.header[0]))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: %d of %d deliveries", h.srv.URL, i, n)
		}
	}
}

func openOwner(t *testing.T, ownerURL string) *bun.DB {
	t.Helper()
	d, err := db.Open(context.Background(), ownerURL, db.Options{MaxOpenConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// scan reads every column of every row of every table as the owner, and
// every file of the JetStream store, for a trace of the secrets or of the
// ring's keys: "whsec_", a secret's text or base64, its raw key as bytea
// (hex) or base64, a ring key's base64 or bytes — each also hex-encoded, as
// a bytea column holding it would show.
func scan(t *testing.T, ownerURL, dataDir string, secrets, keyEntries []string, headerValues ...string) {
	t.Helper()
	needles := map[string]string{"prefix": "whsec_"}
	for i, v := range headerValues {
		needles["custom header value "+string(rune('0'+i))] = v
	}
	for i, s := range secrets {
		enc := strings.TrimPrefix(s, "whsec_")
		raw, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			t.Fatal(err)
		}
		needles["secret "+string(rune('0'+i))] = enc
		needles["raw key of secret "+string(rune('0'+i))] = string(raw)
	}
	for _, e := range keyEntries {
		enc := e[strings.Index(e, ":")+1:]
		raw, _ := base64.StdEncoding.DecodeString(enc)
		needles["ring key "+e[:strings.Index(e, ":")]] = enc
		needles["raw ring key "+e[:strings.Index(e, ":")]] = string(raw)
	}
	for name, n := range needles {
		needles[name+" (hex)"] = hex.EncodeToString([]byte(n))
		if len(n) == 32 { // a raw key: also its base64 without padding
			needles[name+" (base64)"] = base64.RawStdEncoding.EncodeToString([]byte(n))
		}
	}
	owner := openOwner(t, ownerURL)
	ctx := context.Background()
	var tables []string
	if err := owner.NewRaw("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1").Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, table := range tables {
		var dump []string
		if err := owner.NewRaw("SELECT row_to_json(t)::text FROM ? t", bun.Ident(table)).Scan(ctx, &dump); err != nil {
			t.Fatal(err)
		}
		rows += len(dump)
		for _, row := range dump {
			for name, n := range needles {
				if strings.Contains(strings.ToLower(row), strings.ToLower(n)) {
					t.Errorf("table %s holds %s: %.200s", table, name, row)
				}
			}
		}
	}
	if len(tables) < 30 || rows < 20 {
		t.Fatalf("scanned %d tables, %d rows: not the whole database", len(tables), rows)
	}
	files := 0
	err := filepath.WalkDir(filepath.Join(dataDir, "nats"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for name, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				t.Errorf("JetStream file %s holds %s", path, name)
			}
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("JetStream store: %d files, %v", files, err)
	}
}

// lead is a lead capture without a task: one client.created event.
func lead(name string) map[string]any {
	return map[string]any{"name": name, "email": name + "@example.com", "task": nil}
}
