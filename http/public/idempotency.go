package public

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/uptrace/bun"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/idempotency"
	"oficina/streams"
	"oficina/tenant"
)

// IdempotencyHeader is the request header of spec 4.1.
const IdempotencyHeader = "Idempotency-Key"

// replayedHeader marks a response served from the idempotency record.
const replayedHeader = "Idempotent-Replayed"

// errNotStored ends the transaction of a write that answered 5xx: nothing
// it did is kept, no record either, so a retry runs it again.
var errNotStored = errors.New("public: server error response is not stored")

// errEarlier ends the transaction of a run that found an earlier request's
// stored answer: the run is discarded and that answer given instead.
var errEarlier = errors.New("public: an earlier request with the key has answered")

// idemCall is the idempotent write in progress: the transaction that the
// handler's s.write and s.tx join, the events its writes recorded, whether
// one of them failed, and the fields to leave out of the stored response.
type idemCall struct {
	tx        bun.Tx
	companyID string
	events    []streams.Recorded
	failed    error
	strip     []string
}

type idemKey struct{}

func callOf(ctx context.Context, companyID string) *idemCall {
	c, ok := ctx.Value(idemKey{}).(*idemCall)
	if !ok || c.companyID != companyID {
		return nil
	}
	return c
}

// omitOnReplay names top-level fields of the handler's JSON response that
// must not be stored with the idempotency record, so a replay answers
// without them: a secret shown only once (POST /webhook_endpoints calls
// omitOnReplay(ctx, "secret")). The first response still carries them.
// Without an Idempotency-Key it does nothing.
func omitOnReplay(ctx context.Context, fields ...string) {
	if c, ok := ctx.Value(idemKey{}).(*idemCall); ok {
		c.strip = append(c.strip, fields...)
	}
}

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

// idempotent runs a write sent with an Idempotency-Key in one company
// transaction (docs/decisions/0010): claim the key (409 while another
// request holds it; the claim is sent with BEGIN) and run the handler on the bet that the key is new,
// buffering its answer; then store the answer with the write and commit —
// or, when an earlier request already stored one, roll this run back and
// replay that answer (422 if it was another request). 4xx answers are
// stored with the handler's writes rolled back to a savepoint; 5xx answers
// roll everything back and are not stored. The answer is sent, and events
// published, only after commit.
//
// A handler that answers 2xx although one of its s.write calls failed (an
// error swallowed) gets 500 and nothing is kept: without a key s.write
// would have rolled that write back on its own.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, p *tenant.Principal, key string) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	fp := idempotency.Fingerprint(r.Method, r.URL.EscapedPath(), r.URL.Query(), body)
	now := s.deps.Now()
	call := &idemCall{companyID: p.CompanyID()}
	res := &captured{header: http.Header{}}
	var earlier *idempotency.Record
	// The claim travels with BEGIN: a key held by another request refuses
	// the transaction before anything runs.
	claim := idempotency.ClaimFirst(p.CompanyID(), key)
	err = tenant.TxWith(r.Context(), s.deps.DB, p.CompanyID(), claim, func(ctx context.Context, tx bun.Tx) error {
		call.tx = tx
		s.f.Mux.ServeHTTP(res, r.WithContext(context.WithValue(ctx, idemKey{}, call)))
		status := res.code()
		if status >= 400 || call.failed != nil {
			if err := idempotency.Undo(ctx, tx); err != nil {
				return err
			}
			call.events = nil
		}
		if status >= 500 || (call.failed != nil && status < 400) {
			// Not stored; but if an earlier request stored an answer, that
			// is the answer.
			if earlier, err = idempotency.Find(ctx, tx, p.CompanyID(), key, now); err != nil || earlier != nil {
				return errors.Join(err, errEarlier)
			}
			if status < 400 {
				return fmt.Errorf("public: handler answered %d after a failed write: %w", status, call.failed)
			}
			return errNotStored
		}
		stored, err := stripFields(res.body.Bytes(), call.strip)
		if err != nil {
			return err
		}
		err = idempotency.Save(ctx, tx, &idempotency.Record{
			CompanyID: p.CompanyID(), Key: key, RequestHash: fp[:], Method: r.Method, Path: r.URL.EscapedPath(),
			Status: status, Header: res.storedHeader(), Body: stored,
			CreatedAt: now, ExpiresAt: now.Add(s.deps.IdempotencyTTL),
		})
		if errors.Is(err, idempotency.ErrLive) {
			if earlier, err = idempotency.Find(ctx, tx, p.CompanyID(), key, now); err == nil && earlier == nil {
				err = idempotency.ErrLive // cannot be: it was live a statement ago
			}
			return errors.Join(err, errEarlier)
		}
		return err
	})
	switch {
	case idempotency.InProgress(err):
		s.observeIdempotency(idempotency.KeyInProgress)
		return apierr.New(apierr.IdempotencyInProgress)
	case errors.Is(err, errEarlier) && earlier != nil:
		if !earlier.Matches(fp) {
			s.observeIdempotency(idempotency.KeyReused)
			return apierr.New(apierr.IdempotencyKeyReused)
		}
		s.observeIdempotency(idempotency.Replayed)
		replayTo(w, r, earlier)
		return nil
	case errors.Is(err, errNotStored):
		res.sendTo(w)
		return nil
	case err != nil:
		return err
	}
	res.sendTo(w)
	if len(call.events) > 0 && s.deps.Publisher != nil {
		s.deps.Publisher.AfterCommit(context.WithoutCancel(r.Context()), call.events)
	}
	return nil
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
