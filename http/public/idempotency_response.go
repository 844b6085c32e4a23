package public

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"oficina/schema/apierr"
)

// captured buffers a handler's response until the transaction that holds
// its write (and the idempotency record) has committed.
type captured struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (c *captured) Header() http.Header { return c.header }

func (c *captured) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}

func (c *captured) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(b)
}

func (c *captured) code() int {
	if c.status == 0 {
		return http.StatusOK
	}
	return c.status
}

func (c *captured) sendTo(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range c.header {
		h[k] = v
	}
	w.WriteHeader(c.code())
	_, _ = w.Write(c.body.Bytes())
}

// perRequestHeaders describe one response, not the operation, so a replay
// carries its own.
var perRequestHeaders = []string{
	"Content-Length", "Date", "Request-Id", "X-Request-Id", "X-Powered-By", "Server-Timing", "Trailer",
	"Ratelimit-Limit", "Ratelimit-Remaining", "Ratelimit-Reset", "Retry-After", replayedHeader,
}

// storedHeader is what a replay repeats: what the handler set (Location,
// Content-Type, …) minus the per-request headers.
func (c *captured) storedHeader() http.Header {
	h := c.header.Clone()
	for _, k := range perRequestHeaders {
		h.Del(k)
	}
	return h
}

// errStrip is a response that had fields to leave out but is not a JSON
// object: storing it could keep a secret, so the write fails instead.
var errStrip = errors.New("public: response fields to omit on replay, but the body is not a JSON object")

// stripFields removes the named top-level fields of a JSON object, keeping
// the others in order.
func stripFields(body []byte, fields []string) ([]byte, error) {
	if len(fields) == 0 {
		return body, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errStrip
	}
	var out bytes.Buffer
	out.WriteByte('{')
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errStrip
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errStrip
		}
		if slices.Contains(fields, k) {
			continue
		}
		if n > 0 {
			out.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	if bytes.HasSuffix(body, []byte("\n")) {
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// storedError reads a stored error envelope back into the error it came
// from; nil when the body is not one.
func storedError(body []byte) *apierr.Error {
	var b apierr.Body
	if err := json.Unmarshal(body, &b); err != nil || b.Error.Code == "" {
		return nil
	}
	e := &apierr.Error{Code: b.Error.Code}
	for _, f := range b.Error.Errors {
		e.Fields = append(e.Fields, apierr.FieldError{Param: f.Param, Code: f.Code})
	}
	if _, ok := apierr.Default.Lookup(e.Code); !ok {
		return nil
	}
	return e
}
