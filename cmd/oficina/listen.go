package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"oficina/http/apiclient"
	"oficina/http/sse"
	"oficina/schema/signing"
)

// runListen is `oficina listen`: the company's events, as they happen,
// signed and posted to a URL on the developer's machine (docs/api.md,
// "Building locally"). It reads GET /events/stream with an API key, signs
// each event with a local secret kept in --dir (the same across restarts,
// Standard Webhooks), posts it to --forward-to and prints one line per
// event. The last position is kept in --dir too: a restarted listen
// resumes right after the last event it received.
func runListen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	forward := fs.String("forward-to", "", "the URL each event is posted to, e.g. http://localhost:3000/webhooks (required)")
	api := apiFlags(fs)
	types := fs.String("events", "", "comma-separated event types or families (sale.*) to forward; empty: every event the key may read")
	dir := fs.String("dir", filepath.Join("var", "listen"), "where the signing secret and the last position are kept")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *forward == "" {
		return errors.New("listen: --forward-to is required")
	}
	c, err := api.client()
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	secret, err := listenSecret(filepath.Join(*dir, "secret"))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	key, err := signing.ParseSecret(secret)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	company, err := c.companyID(ctx)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	l := &listener{api: c, forward: *forward, key: key, out: stdout, types: splitList(*types),
		positionFile: filepath.Join(*dir, company+".position"), client: &http.Client{Timeout: 10 * time.Second}}
	fmt.Fprintf(stdout, "listen: forwarding %s's events to %s\nlisten: signing secret %s (kept in %s; verify with it)\n",
		company, *forward, secret, filepath.Join(*dir, "secret"))
	return l.run(ctx)
}

// listener is one `oficina listen`.
type listener struct {
	api          *apiClient
	forward      string
	key          []byte
	types        []string
	positionFile string
	out          io.Writer
	client       *http.Client
}

// run reads the stream until ctx ends, reconnecting (1 s, doubling to
// 10 s) from the last position whenever the connection drops.
func (l *listener) run(ctx context.Context) error {
	wait := time.Second
	for {
		err := l.once(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fatal *streamRefused
		if errors.As(err, &fatal) {
			return fmt.Errorf("listen: %w", err)
		}
		fmt.Fprintf(l.out, "listen: stream ended (%v); reconnecting in %s\n", err, wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Second)
	}
}

// streamRefused is an answer that a reconnection would not change (a bad
// key, a missing permission).
type streamRefused struct {
	status int
	body   string
}

func (e *streamRefused) Error() string {
	return fmt.Sprintf("the API answered %d: %s", e.status, e.body)
}

// once reads one connection of the stream.
func (l *listener) once(ctx context.Context) error {
	var params apiclient.StreamEventsParams
	if len(l.types) > 0 {
		params.Type = &l.types
	}
	last, err := l.position()
	if err != nil {
		return err
	}
	resp, err := l.api.stream.StreamEvents(ctx, &params, func(_ context.Context, req *http.Request) error {
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			return fmt.Errorf("the API answered %d", resp.StatusCode)
		}
		return &streamRefused{resp.StatusCode, strings.TrimSpace(string(b))}
	}
	from := "the next event"
	if last != "" {
		from = "after position " + last
	}
	fmt.Fprintf(l.out, "listen: ready, from %s\n", from)
	err = sse.Read(resp.Body, func(m sse.Message) error {
		if answered := l.deliver(ctx, m.Event, []byte(m.Data)); !answered && ctx.Err() != nil {
			// Stopped before the receiver answered: the position stays
			// before this event, so the next start sends it again (at
			// least once).
			return ctx.Err()
		}
		return l.keep(m.ID)
	})
	if err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// deliver signs body and posts it to the forward URL, printing one line;
// answered says the receiver answered (any status).
func (l *listener) deliver(ctx context.Context, event string, body []byte) (answered bool) {
	var env struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &env)
	start := time.Now()
	status := "error"
	defer func() {
		fmt.Fprintf(l.out, "%s  %-32s %s  → %s (%d ms)\n", start.Format("15:04:05"), event, env.ID, status,
			time.Since(start).Milliseconds())
	}()
	h, err := signing.Headers([][]byte{l.key}, env.ID, start, body)
	if err != nil {
		status = err.Error()
		return false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.forward, bytes.NewReader(body))
	if err != nil {
		status = err.Error()
		return false
	}
	req.Header = h
	resp, err := l.client.Do(req)
	if err != nil {
		status = err.Error()
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	status = strconv.Itoa(resp.StatusCode)
	return true
}

// position is the last position received ("" for none).
func (l *listener) position() (string, error) {
	b, err := os.ReadFile(l.positionFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return strings.TrimSpace(string(b)), err
}

// keep writes the position down (a temporary file renamed over the last,
// so a kill never leaves half of one).
func (l *listener) keep(id string) error {
	tmp := l.positionFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, l.positionFile)
}

// listenSecret is the signing secret in file, made (0600) on first use.
func listenSecret(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	secret, err := signing.NewSecret(rand.Reader)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", err
	}
	return secret, os.WriteFile(file, []byte(secret+"\n"), 0o600)
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
