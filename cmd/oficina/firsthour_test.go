package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"oficina/ops/testkit"
)

// runMainEnv makes this test binary run the program itself (TestMain): the
// walk-through starts `oficina` processes exactly as main runs them,
// signals included, without building a second binary.
const runMainEnv = "OFICINA_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Issue 23, "Done when": the README's first hour, as CI runs it. The steps
// of docs/api.md, "Testing webhooks on your machine": `oficina receive`,
// then make run's program (`oficina dev --seed`) with the two development
// settings, each a process of its own, on free ports and a database of
// its own; the key it prints registers the receiver, one order is created,
// and its delivery reaches the receiver signed — the Standard Webhooks
// library verifies it with the endpoint's secret. Ctrl-C (SIGINT) then
// ends both with status 0, and no NATS permission was refused meanwhile.
func TestFirstHourGetsASignedWebhookToALocalReceiver(t *testing.T) {
	t.Parallel()
	started := time.Now()
	dir := t.TempDir()
	database := testkit.EmptyScratchDB(t, "firsthour") // dev migrates it, as make run does its own

	recv := startProgram(t, nil, "receive", "--addr", "127.0.0.1:0", "--dir", filepath.Join(dir, "receiver"))
	recvURL := recv.waitFor(t, `receiver: listening on (https://\S+/)`, 30*time.Second)[1]

	dev := startProgram(t, []string{
		"DATABASE_URL=" + database, "OFICINA_DATA_DIR=" + filepath.Join(dir, "var"),
		"OFICINA_HTTP_ADDR=127.0.0.1:0", "OFICINA_ADMIN_ADDR=127.0.0.1:0", "OFICINA_NATS_PORT=-1",
		"OFICINA_ALLOW_PRIVATE_DESTINATIONS=127.0.0.1/32", "OFICINA_EXTRA_CA_FILE=" + filepath.Join(dir, "receiver", "cert.pem"),
	}, "dev", "--seed")
	api := dev.waitFor(t, `(?m)^public API  (http://\S+)/public/v1 `, 90*time.Second)[1]
	key := dev.waitFor(t, `(?m)^  (ofk_\S+)$`, time.Second)[1]
	t.Logf("oficina dev answered at %s after %v", api, time.Since(started).Round(time.Millisecond))

	var endpoint struct{ Secret string }
	call(t, api, key, "/webhook_endpoints", map[string]any{"url": recvURL + "hooks", "events": []string{"service_order.created"}}, &endpoint)
	var order struct{ ID string }
	call(t, api, key, "/service_orders", map[string]any{"client_name": "Maria"}, &order)

	// The receiver prints a request as three lines: method, path and the
	// webhook headers; the signature header; the body as received.
	got := recv.waitFor(t, `(?m)^POST /hooks webhook-id=(\S+) webhook-timestamp=(\S+) signature=unchecked\nwebhook-signature: (.+)\n(.+)$`, 30*time.Second)
	wh, err := standardwebhooks.NewWebhook(endpoint.Secret)
	if err != nil {
		t.Fatal(err)
	}
	header := http.Header{}
	header.Set("webhook-id", got[1])
	header.Set("webhook-timestamp", got[2])
	header.Set("webhook-signature", got[3])
	if err := wh.Verify([]byte(got[4]), header); err != nil {
		t.Fatalf("the delivery's signature does not verify: %v\n%s", err, got[0])
	}
	var event struct {
		Type string
		Data struct{ Object struct{ ID string } }
	}
	if err := json.Unmarshal([]byte(got[4]), &event); err != nil || event.Type != "service_order.created" || event.Data.Object.ID != order.ID {
		t.Fatalf("delivered %s (%v), want service_order.created of %s", got[4], err, order.ID)
	}

	for _, p := range []*program{dev, recv} {
		if code := p.interrupt(t); code != 0 {
			t.Errorf("%s ended with status %d after Ctrl-C, want 0; its log:\n%s", p.name, code, p.stderr.String())
		}
	}
	if strings.Contains(dev.stderr.String(), "ermissions violation") {
		t.Errorf("NATS refused oficina dev something:\n%s", dev.stderr.String())
	}
	t.Logf("a signed webhook at the local receiver, both stopped, after %v", time.Since(started).Round(time.Millisecond))
}

// Issue 23 item 3: make run runs the built binary. Interrupted, `go run`
// exits 1 even when the program it ran shut down cleanly (status 0), and
// make then ends Ctrl-C with "make: *** [run] Error 1".
func TestMakeRunRunsTheBuiltBinary(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	mk := string(b)
	if !strings.Contains(mk, "\nbuild: ") || !strings.Contains(mk, "$(GO) build -o bin/oficina ./cmd/oficina\n") {
		t.Error("make build does not write bin/oficina")
	}
	run := regexp.MustCompile(`(?m)^run: (.*)\n((?:\t.*\n)+)`).FindStringSubmatch(mk)
	if run == nil || !strings.Contains(run[1], "build") || strings.Contains(run[2], "go run") || strings.Contains(run[2], "$(GO) run") ||
		!strings.Contains(run[2], "./bin/oficina dev --seed") {
		t.Errorf("make run does not run ./bin/oficina dev --seed after make build:\n%v", run)
	}
}

// program is an `oficina` process the test started.
type program struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr *testkit.SyncBuffer
	done           chan struct{}
}

// startProgram runs oficina args with env added to this process's
// environment, less every setting of its own (a developer's OFICINA_*,
// DATABASE_URL or NATS_URL must not leak in). It is interrupted, then
// killed, when the test ends.
func startProgram(t *testing.T, env []string, args ...string) *program {
	t.Helper()
	p := &program{name: "oficina " + args[0], stdout: &testkit.SyncBuffer{}, stderr: &testkit.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OFICINA_") && !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "NATS_URL=") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(append(p.cmd.Env, runMainEnv+"=1"), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		if p.interrupt(t) != 0 && t.Failed() {
			t.Logf("%s stdout:\n%s\nstderr (last 4 KB):\n%s", p.name, p.stdout.String(), lastBytes(p.stderr.String(), 4096))
		}
	})
	return p
}

// waitFor returns the submatches of pattern in the program's output once
// it appears; the test fails if it does not within bound, or the program
// ends first.
func (p *program) waitFor(t *testing.T, pattern string, bound time.Duration) []string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(bound)
	for {
		if m := re.FindStringSubmatch(p.stdout.String()); m != nil {
			return m
		}
		select {
		case <-p.done:
			t.Fatalf("%s ended (%v) before printing %q:\n%s\n%s", p.name, p.cmd.ProcessState, pattern, p.stdout.String(), lastBytes(p.stderr.String(), 4096))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %q within %v:\n%s\n%s", p.name, pattern, bound, p.stdout.String(), lastBytes(p.stderr.String(), 4096))
		}
	}
}

// interrupt sends SIGINT, as Ctrl-C does, and returns the exit status
// (killed after 30 s: -1).
func (p *program) interrupt(t *testing.T) int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Errorf("%s did not stop within 30 s of SIGINT", p.name)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return p.cmd.ProcessState.ExitCode()
}

// call posts body to the public API with key and decodes the 201 answer
// into out.
func call(t *testing.T, api, key, path string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", api+"/public/v1"+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&raw)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("… %s", s[len(s)-n:])
}
