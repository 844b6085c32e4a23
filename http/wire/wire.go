// Package wire is the transport's edge: request ids, the message language,
// strict JSON request decoding (415, 413, 400 and 422 as part 7 says) and
// writing responses and error envelopes. Every route, public or admin, reads
// and writes through it so errors look the same everywhere.
package wire

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"

	"oficina/schema/apierr"
	"oficina/schema/db"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyLang
)

// NewRequestID returns req_ + 24 hex characters.
func NewRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// WithRequest stores the request id and the negotiated language.
func WithRequest(ctx context.Context, requestID, lang string) context.Context {
	ctx = context.WithValue(ctx, keyRequestID, requestID)
	return context.WithValue(ctx, keyLang, lang)
}

// RequestID returns the request id ("" outside /public/v1).
func RequestID(ctx context.Context) string {
	s, _ := ctx.Value(keyRequestID).(string)
	return s
}

// Lang returns the message language (default pt-BR).
func Lang(ctx context.Context) string {
	if s, ok := ctx.Value(keyLang).(string); ok {
		return s
	}
	return apierr.Languages[0]
}

// WriteJSON writes v with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		WriteError(w, &http.Request{}, apierr.Wrap(apierr.InternalError, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// RetryAfterUnavailable is the Retry-After of a 503 service_unavailable
// (seconds): long enough for a database restart to finish.
const RetryAfterUnavailable = "2"

// WriteError writes err as the envelope, in the request's language and with
// its request id. Causes of 5xx go to the log, never to the caller.
//
// This is the one place where a database out of reach becomes 503
// service_unavailable with Retry-After instead of 500 internal_error, for
// every route, public or admin, whatever step of the pipeline failed.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	e := apierr.As(err)
	if e.Code == apierr.InternalError && db.Unreachable(err) {
		e = apierr.Wrap(apierr.ServiceUnavailable, err)
	}
	if e.Code == apierr.ServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", RetryAfterUnavailable)
	}
	ctx := context.Background()
	if r != nil && r.Context() != nil {
		ctx = r.Context()
	}
	status, body := apierr.Default.Envelope(e, Lang(ctx), RequestID(ctx))
	if status >= 500 {
		slog.ErrorContext(ctx, "request failed", "request_id", RequestID(ctx), "code", e.Code, "error", err)
	}
	b, _ := json.Marshal(body)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
