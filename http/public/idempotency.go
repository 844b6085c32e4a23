package public

import (
	"errors"
	"io"
	"net/http"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/idempotency"
)

// IdempotencyHeader is the request header of spec 4.1.
const IdempotencyHeader = "Idempotency-Key"

// replayedHeader marks a response served from the idempotency record.
const replayedHeader = "Idempotent-Replayed"

// idempotencyKey returns the request's key; a repeated, empty, over-long or
// non-ASCII key is 400 invalid_request.
func idempotencyKey(r *http.Request) (string, bool, error) {
	vs := r.Header.Values(IdempotencyHeader)
	switch {
	case len(vs) == 0:
		return "", false, nil
	case len(vs) > 1:
		return "", false, apierr.New(apierr.InvalidRequest)
	}
	if err := idempotency.ValidKey(vs[0]); err != nil {
		return "", false, apierr.Wrap(apierr.InvalidRequest, err)
	}
	return vs[0], true, nil
}

func (s *Server) observeIdempotency(result string) {
	if s.deps.Idempotency != nil {
		s.deps.Idempotency(result)
	}
}

// readBody reads the whole body (at most 1 MB, else 413).
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, wire.MaxBody+1))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe) || len(b) > wire.MaxBody:
		return nil, apierr.New(apierr.RequestTooLarge)
	case err != nil:
		return nil, apierr.Wrap(apierr.InvalidRequest, err)
	}
	return b, nil
}

// replayTo answers with a stored response. A stored error is rendered
// again from its code and fields, so its message follows this request's
// Accept-Language and its request_id is this request's.
func replayTo(w http.ResponseWriter, r *http.Request, rec *idempotency.Record) {
	h := w.Header()
	for k, v := range rec.Header {
		h[k] = v
	}
	h.Set(replayedHeader, "true")
	if rec.Status >= 400 {
		if e := storedError(rec.Body); e != nil && e.Status() == rec.Status {
			wire.WriteError(w, r, e)
			return
		}
	}
	w.WriteHeader(rec.Status)
	_, _ = w.Write(rec.Body)
}
