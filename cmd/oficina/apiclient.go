package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"oficina/http/public"
)

// apiOptions are the flags of the commands that call the public API as an
// integrator would (listen, trigger): where it is and the API key.
type apiOptions struct {
	url, key *string
}

func apiFlags(fs *flag.FlagSet) apiOptions {
	def := os.Getenv("OFICINA_API_URL")
	if def == "" {
		def = "http://localhost:8080"
	}
	return apiOptions{
		url: fs.String("api", def, "the API's base URL, as make run serves it (env OFICINA_API_URL)"),
		key: fs.String("api-key", os.Getenv("OFICINA_API_KEY"), "an API key of the company (ofk_…; env OFICINA_API_KEY)"),
	}
}

func (o apiOptions) client() (*apiClient, error) {
	if *o.key == "" {
		return nil, errors.New("an API key is required: --api-key or OFICINA_API_KEY")
	}
	return &apiClient{base: strings.TrimSuffix(*o.url, "/") + public.Prefix, key: *o.key,
		plain: &http.Client{Timeout: 30 * time.Second}, stream: &http.Client{}}, nil
}

// apiClient calls the public API with one key.
type apiClient struct {
	base, key string
	plain     *http.Client // requests that answer at once
	stream    *http.Client // the event stream: no time limit
}

func (c *apiClient) request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// apiError is an answer of the API's error envelope.
type apiError struct {
	Status int
	Code   string
	Body   string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Body) }

// call sends one request (a write with an Idempotency-Key of its own, so a
// retry of the command's step cannot write twice) and decodes a 2xx answer
// into out (nil: ignored).
func (c *apiClient) call(ctx context.Context, method, path string, body, out any) error {
	req, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	if method != http.MethodGet {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		req.Header.Set("Idempotency-Key", "cli-"+hex.EncodeToString(b))
	}
	resp, err := c.plain.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var env struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(raw, &env)
		return &apiError{Status: resp.StatusCode, Code: env.Error.Code, Body: strings.TrimSpace(string(raw))}
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// companyID is the key's company (GET /me).
func (c *apiClient) companyID(ctx context.Context) (string, error) {
	var me struct {
		Organization struct {
			ID string `json:"id"`
		} `json:"organization"`
	}
	if err := c.call(ctx, http.MethodGet, "/me", nil, &me); err != nil {
		return "", err
	}
	return me.Organization.ID, nil
}
