package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// request is one hostile request as sent.
type request struct {
	Method string
	Path   string // after the host: "/public/v1/sales/x?limit=1", escapes kept
	Header http.Header
	Body   []byte
	// Chunked sends the body without a Content-Length.
	Chunked bool
	// Source is the local address to send from ("" = any): failed
	// authentications are spread over loopback addresses so the server's
	// per-address throttle does not refuse the rest of the run.
	Source string
}

func (r request) String() string { return r.Method + " " + r.Path }

// answer is what came back.
type answer struct {
	Status int
	Header http.Header
	Raw    []byte
	JSON   map[string]any // nil when the body is not a JSON object
}

// errorField returns error.<name> of an envelope as a string.
func (a answer) errorField(name string) string {
	e, _ := a.JSON["error"].(map[string]any)
	s, _ := e[name].(string)
	return s
}

// client sends requests to the target.
type client struct {
	base, admin, adminToken string
	host                    string // host:port of the public listener

	mu    sync.Mutex
	bysrc map[string]*http.Client
}

func newClient(t Target) (*client, error) {
	var host string
	if t.URL != "" {
		u, err := url.Parse(t.URL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("hostile: target URL %q: %v", t.URL, err)
		}
		host = u.Host
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	return &client{base: strings.TrimRight(t.URL, "/"), admin: strings.TrimRight(t.AdminURL, "/"), adminToken: t.AdminToken,
		host: host, bysrc: map[string]*http.Client{}}, nil
}

func (c *client) httpClient(src string) *http.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.bysrc[src]; ok {
		return hc
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	hc := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 32, DisableCompression: true,
			ResponseHeaderTimeout: 30 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	c.bysrc[src] = hc
	return hc
}

func (c *client) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, hc := range c.bysrc {
		hc.CloseIdleConnections()
	}
}

// send performs r against base.
func (c *client) send(ctx context.Context, base string, r request) (answer, error) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
		if r.Chunked {
			body = io.MultiReader(body) // hides the length: the transport chunks
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, base+r.Path, body)
	if err != nil {
		return answer{}, err
	}
	if r.Chunked {
		req.ContentLength = -1
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	resp, err := c.httpClient(r.Source).Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return answer{}, err
	}
	return decodeAnswer(resp.StatusCode, resp.Header, raw), nil
}

func decodeAnswer(status int, h http.Header, raw []byte) answer {
	a := answer{Status: status, Header: h, Raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil {
			a.JSON = m
		}
	}
	return a
}

// public sends a JSON request to the public API with key; a write goes
// with an Idempotency-Key and is retried with it (sendWrite).
func (c *client) public(ctx context.Context, method, path, key string, body any) (answer, error) {
	r, err := jsonCallRequest(method, Prefix+path, key, body)
	if err != nil {
		return answer{}, err
	}
	if isWrite(method) {
		return c.sendWrite(ctx, r)
	}
	return c.send(ctx, c.base, r)
}

// adminCall sends a JSON request to the admin API.
func (c *client) adminCall(ctx context.Context, method, path string, body any) (answer, error) {
	return c.jsonCall(ctx, c.admin, method, "/admin/v1"+path, c.adminToken, body)
}

func (c *client) jsonCall(ctx context.Context, base, method, path, bearer string, body any) (answer, error) {
	r, err := jsonCallRequest(method, path, bearer, body)
	if err != nil {
		return answer{}, err
	}
	return c.send(ctx, base, r)
}

func jsonCallRequest(method, path, bearer string, body any) (request, error) {
	r := request{Method: method, Path: path, Header: http.Header{}}
	if bearer != "" {
		r.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return request{}, err
		}
		r.Body = b
		r.Header.Set("Content-Type", "application/json")
	}
	return r, nil
}

// adminWant is adminCall that wants one status.
func (c *client) adminWant(ctx context.Context, method, path string, body any, want int) (map[string]any, error) {
	a, err := c.adminCall(ctx, method, path, body)
	return must(a, err, want, "admin "+method+" "+path)
}

// publicWant is public that wants one status.
func (c *client) publicWant(ctx context.Context, method, path, key string, body any, want int) (map[string]any, error) {
	a, err := c.public(ctx, method, path, key, body)
	return must(a, err, want, method+" "+path)
}

func must(a answer, err error, want int, what string) (map[string]any, error) {
	if err != nil {
		return nil, fmt.Errorf("hostile: %s: %w", what, err)
	}
	if a.Status != want {
		return nil, fmt.Errorf("hostile: %s: %d %s", what, a.Status, snippet(a.Raw))
	}
	return a.JSON, nil
}

// raw sends bytes over a new TCP connection and reads one response; the
// request is written while the answer is read, so a server that answers
// before the body is complete (413) is still heard.
func (c *client) raw(ctx context.Context, src string, payload []byte, wait time.Duration) (answer, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	conn, err := d.DialContext(ctx, "tcp", c.host)
	if err != nil {
		return answer{}, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(wait))
	go func() { _, _ = conn.Write(payload) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return answer{}, err
	}
	return decodeAnswer(resp.StatusCode, resp.Header, b), nil
}

func snippet(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.TrimSpace(s)
}
