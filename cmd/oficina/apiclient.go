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

	"oficina/http/apiclient"
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

// apiClient is the generated client (http/apiclient) with one key: api for
// requests that answer at once, stream for GET /events/stream.
type apiClient struct {
	api    *apiclient.ClientWithResponses
	stream apiclient.ClientInterface
}

func (o apiOptions) client() (*apiClient, error) {
	if *o.key == "" {
		return nil, errors.New("an API key is required: --api-key or OFICINA_API_KEY")
	}
	base, auth := strings.TrimSuffix(*o.url, "/"), apiclient.WithRequestEditorFn(apiclient.BearerKey(*o.key))
	api, err := apiclient.NewClientWithResponses(base, auth, apiclient.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		return nil, err
	}
	stream, err := apiclient.NewClient(base, auth, apiclient.WithHTTPClient(&http.Client{}))
	if err != nil {
		return nil, err
	}
	return &apiClient{api: api, stream: stream}, nil
}

// answer is what every generated response carries.
type answer interface{ StatusCode() int }

// apiError is an answer in the API's error envelope.
type apiError struct {
	Status int
	Body   string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Body) }

// checked is the body of a 2xx answer, or the answer as an error.
func checked(a answer, body []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	if a.StatusCode() >= 300 {
		return nil, &apiError{Status: a.StatusCode(), Body: strings.TrimSpace(string(body))}
	}
	return body, nil
}

// idOf is the "id" of an answer (a lead capture's: its lead's).
func idOf(body []byte) string {
	var v struct {
		ID   string `json:"id"`
		Lead struct {
			ID string `json:"id"`
		} `json:"lead"`
	}
	_ = json.Unmarshal(body, &v)
	if v.ID == "" {
		return v.Lead.ID
	}
	return v.ID
}

// jsonBody is v as a request body for the generated WithBody methods.
func jsonBody(v any) io.Reader {
	b, _ := json.Marshal(v)
	return bytes.NewReader(b)
}

// newKey is an Idempotency-Key of its own for one write, so a retried
// step cannot write twice.
func newKey() *apiclient.IdempotencyKey {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	k := "cli-" + hex.EncodeToString(b)
	return &k
}

// companyID is the key's company (GET /me).
func (c *apiClient) companyID(ctx context.Context) (string, error) {
	r, err := c.api.GetMeWithResponse(ctx)
	if err != nil {
		return "", err
	}
	if r.JSON200 == nil {
		return "", &apiError{Status: r.StatusCode(), Body: strings.TrimSpace(string(r.Body))}
	}
	return r.JSON200.Organization.Id, nil
}
