package public

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/apierr"
	"oficina/schema/idempotency"
	"oficina/streams"
	"oficina/tenant"
)

// actor is the API caller as a writer of events.
func actor(p *tenant.Principal) streams.Actor {
	return streams.Actor{Kind: streams.ActorAPI, MemberID: p.Member.ID, KeyID: p.Key.ID}
}

// errNotStored ends the transaction of a write that answered an error
// (with a key: 5xx): nothing it did is kept, so a retry runs it again.
var errNotStored = errors.New("public: error response is not stored")

// errEarlier ends the transaction of a run that found an earlier request's
// stored answer: the run is discarded and that answer given instead.
var errEarlier = errors.New("public: an earlier request with the key has answered")

// errNoUnit is a handler writing outside a write route: a wiring mistake.
var errNoUnit = errors.New("public: write outside a write route")

// call is one write request in progress: its write unit (transaction,
// company, actor, clocks, events), whether a write the handler made failed,
// and the fields to leave out of a stored response.
type call struct {
	unit   *streams.Write
	failed error
	strip  []string
}

type callKey struct{}

// callOf returns the write request in progress for companyID, or nil
// outside a write route.
func callOf(ctx context.Context, companyID string) *call {
	c, ok := ctx.Value(callKey{}).(*call)
	if !ok || c.unit.CompanyID != companyID {
		return nil
	}
	return c
}

// write runs fn in the request's write unit: the handler's rules record
// their events on w, published after the unit commits. A failed fn fails
// the whole request (its answer is an error, and nothing is kept).
func (s *Server) write(ctx context.Context, p *tenant.Principal, fn func(ctx context.Context, tx bun.Tx, w *streams.Write) error) error {
	c := callOf(ctx, p.CompanyID())
	if c == nil {
		return errNoUnit
	}
	if err := fn(ctx, c.unit.Tx, c.unit); err != nil {
		c.failed = err
		return err
	}
	return nil
}

// tx runs fn in the caller's company transaction: the request's write
// unit's on a write route, a read-only one of its own on a read route.
func (s *Server) tx(ctx context.Context, p *tenant.Principal, fn func(ctx context.Context, tx bun.Tx) error) error {
	if c := callOf(ctx, p.CompanyID()); c != nil {
		return fn(ctx, c.unit.Tx)
	}
	return tenant.Tx(ctx, s.deps.DB, p.CompanyID(), fn)
}

// omitOnReplay names top-level fields of the handler's JSON response that
// must not be stored with the idempotency record, so a replay answers
// without them: a secret shown only once (POST /webhook_endpoints calls
// omitOnReplay(ctx, "secret")). The first response still carries them.
func omitOnReplay(ctx context.Context, fields ...string) {
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		c.strip = append(c.strip, fields...)
	}
}

// unit serves a write request as one write unit (streams.Writer.Run), with
// or without an Idempotency-Key: the handler runs inside the company
// transaction with its answer buffered; the answer is sent once the
// transaction has committed, and the events the handler recorded are
// published then. An error answer (or a handler that answered 2xx after
// one of its writes failed: 500) rolls everything back.
//
// With a key (docs/decisions/0010) the claim travels with BEGIN (409 while
// another request holds it); a 4xx answer is stored with the handler's
// writes rolled back to a savepoint, a 5xx is not stored, and when an
// earlier request already stored an answer this run is rolled back and
// that answer replayed (422 if it was another request, or the same request
// under another API key).
func (s *Server) unit(w http.ResponseWriter, r *http.Request, p *tenant.Principal, key string) error {
	var fp [32]byte
	u := streams.Unit{CompanyID: p.CompanyID(), Actor: actor(p)}
	if key != "" {
		body, err := readBody(r)
		if err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fp = idempotency.Fingerprint(r.Method, r.URL.EscapedPath(), r.URL.Query(), body)
		u.First = idempotency.ClaimFirst(p.CompanyID(), key)
	}
	c := &call{}
	res := &captured{header: http.Header{}}
	var earlier *idempotency.Record
	var at time.Time
	err := s.writer.Run(r.Context(), u, func(ctx context.Context, uw *streams.Write) error {
		c.unit, at = uw, uw.At
		s.f.Mux.ServeHTTP(res, r.WithContext(context.WithValue(ctx, callKey{}, c)))
		status := res.code()
		if key == "" {
			if status >= 400 || c.failed != nil {
				return answered(status, c.failed)
			}
			return nil
		}
		var err error
		earlier, err = s.store(ctx, uw, c, res, r, fp, key)
		return err
	})
	if idempotency.Answered(err) {
		if earlier, err = s.earlier(r.Context(), p.CompanyID(), key, at); err == nil {
			err = errEarlier
		}
	}
	switch {
	case idempotency.InProgress(err):
		s.observeIdempotency(idempotency.KeyInProgress)
		return apierr.New(apierr.IdempotencyInProgress)
	case errors.Is(err, errEarlier) && earlier != nil:
		same := earlier.Matches(fp)
		if same {
			if same, err = s.sameCaller(r.Context(), p, earlier); err != nil {
				return err
			}
		}
		if !same {
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
	return nil
}

// answered is how a write unit without a key ends after an error answer:
// rolled back, the answer sent as it is; 2xx after a failed write is 500.
func answered(status int, failed error) error {
	if status < 400 {
		return fmt.Errorf("public: handler answered %d after a failed write: %w", status, failed)
	}
	return errNotStored
}

// store keeps the answer of an idempotent write with the write, in its
// transaction, or finds the earlier request's answer (returned with
// errEarlier).
func (s *Server) store(ctx context.Context, w *streams.Write, c *call, res *captured, r *http.Request, fp [32]byte, key string) (*idempotency.Record, error) {
	status := res.code()
	if status >= 400 || c.failed != nil {
		if err := idempotency.Undo(ctx, w.Tx); err != nil {
			return nil, err
		}
		w.Discard()
	}
	if status >= 500 || (c.failed != nil && status < 400) {
		// Not stored; but if an earlier request stored an answer, that is
		// the answer.
		earlier, err := idempotency.Find(ctx, w.Tx, w.CompanyID, key, w.At)
		if err != nil || earlier != nil {
			return earlier, errors.Join(err, errEarlier)
		}
		return nil, answered(status, c.failed)
	}
	stored, err := stripFields(res.body.Bytes(), c.strip)
	if err != nil {
		return nil, err
	}
	// Kept with COMMIT: when an earlier request's live answer is in the
	// way the statement fails, the run rolls back, and unit finds that
	// answer in a new transaction.
	return nil, w.Later(ctx, w.Tx, idempotency.Keep(&idempotency.Record{
		CompanyID: w.CompanyID, Key: key, RequestHash: fp[:], Method: r.Method, Path: r.URL.EscapedPath(),
		Status: status, Header: res.storedHeader(), Body: stored,
		CreatedAt: w.At, ExpiresAt: w.At.Add(s.deps.IdempotencyTTL), APIKeyID: w.Actor.KeyID,
	}))
}

// sameCaller reports whether the caller may have rec's answer replayed:
// its API key made it, or is a rotation of the key that did (the same
// member and permissions). The answer was rendered for that key's
// permissions — a lead in full for a key that may read clients — so
// another key of the company gets 422 instead (decision 0010).
func (s *Server) sameCaller(ctx context.Context, p *tenant.Principal, rec *idempotency.Record) (bool, error) {
	switch {
	case rec.MadeBy(p.Key.ID):
		return true, nil
	case rec.APIKeyID == "":
		return false, nil // made before records were bound to keys
	}
	var same bool
	err := tenant.Tx(ctx, s.deps.DB, p.CompanyID(), func(ctx context.Context, tx bun.Tx) error {
		var err error
		same, err = tenant.SameCredential(ctx, tx, rec.APIKeyID, p.Key.ID)
		return err
	})
	return same, err
}

// earlier finds the live answer that refused an idempotent run's record
// (idempotency.Answered), in a transaction of its own: the run's is gone.
func (s *Server) earlier(ctx context.Context, companyID, key string, at time.Time) (*idempotency.Record, error) {
	var rec *idempotency.Record
	err := tenant.Tx(ctx, s.deps.DB, companyID, func(ctx context.Context, tx bun.Tx) error {
		var err error
		rec, err = idempotency.Find(ctx, tx, companyID, key, at)
		if err == nil && rec == nil {
			err = idempotency.ErrLive // cannot be: it was live a statement ago
		}
		return err
	})
	return rec, err
}
