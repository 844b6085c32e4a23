package public

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"oficina/http/wire"
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

// read runs fn in a company transaction of its own: a read route's
// handler reads through it (a write route's uses its unit, Call.W).
func (s *Server) read(ctx context.Context, p *tenant.Principal, fn func(ctx context.Context, tx bun.Tx) error) error {
	return tenant.Tx(ctx, s.deps.DB, p.CompanyID(), fn)
}

// unit serves a write request as one write unit (streams.Writer.Run), with
// or without an Idempotency-Key: the route's handler runs once, inside the
// company transaction, with the unit as its Call.W; its answer is buffered
// and sent once the transaction has committed, and the events its rules
// recorded are published then. An error answer rolls everything back.
//
// With a key (docs/decisions/0010) the claim travels with BEGIN (409 while
// another request holds it); a 4xx answer is stored with the handler's
// writes rolled back to a savepoint, a 5xx is not stored, and when an
// earlier request already stored an answer this run is rolled back and
// that answer replayed (422 if it was another request, or the same request
// under another API key).
func (s *Server) unit(w http.ResponseWriter, r *http.Request, p *tenant.Principal, key string, rt *route) error {
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
	res := &captured{header: http.Header{}}
	var earlier *idempotency.Record
	var at time.Time
	err := s.writer.Run(r.Context(), u, func(ctx context.Context, uw *streams.Write) error {
		at = uw.At
		var omit []string
		ans, err := rt.run(ctx, r, p, uw)
		if err == nil {
			omit = ans.omit
			err = ans.writeTo(res)
		}
		if err != nil {
			wire.WriteError(res, r, err)
		}
		if key == "" {
			if res.code() >= 400 {
				return errNotStored
			}
			return nil
		}
		earlier, err = s.store(ctx, uw, res, omit, r, fp, key)
		return err
	})
	switch {
	case idempotency.Answered(err):
		if earlier, err = s.earlier(r.Context(), p.CompanyID(), key, at); err == nil && earlier == nil {
			err = idempotency.ErrLive // cannot be: it was live a statement ago
		} else if err == nil {
			err = errEarlier
		}
	case key != "" && err != nil && !errors.Is(err, errEarlier) && !errors.Is(err, errNotStored) && !idempotency.InProgress(err):
		// The run failed past its handler (a statement's error swallowed
		// left the transaction aborted, so the commit refused): an answer
		// an earlier request stored for the key is still the answer.
		if rec, ferr := s.earlier(r.Context(), p.CompanyID(), key, at); ferr == nil && rec != nil {
			earlier, err = rec, errEarlier
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

// store keeps the answer of an idempotent write with the write, in its
// transaction, or finds the earlier request's answer (returned with
// errEarlier).
func (s *Server) store(ctx context.Context, w *streams.Write, res *captured, omit []string, r *http.Request, fp [32]byte, key string) (*idempotency.Record, error) {
	status := res.code()
	if status >= 400 {
		if err := idempotency.Undo(ctx, w.Tx); err != nil {
			return nil, err
		}
		w.Discard()
	}
	if status >= 500 {
		// Not stored; but if an earlier request stored an answer, that is
		// the answer.
		earlier, err := idempotency.Find(ctx, w.Tx, w.CompanyID, key, w.At)
		if err != nil || earlier != nil {
			return earlier, errors.Join(err, errEarlier)
		}
		return nil, errNotStored
	}
	stored, err := stripFields(res.body.Bytes(), omit)
	if err != nil {
		return nil, err
	}
	// Kept with COMMIT: when an earlier request's live answer is in the
	// way the statement fails, the run rolls back, and unit finds that
	// answer in a new transaction.
	return nil, w.Later(ctx, idempotency.Keep(&idempotency.Record{
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

// earlier finds the live answer stored for key (nil: none), in a
// transaction of its own: the run's is gone.
func (s *Server) earlier(ctx context.Context, companyID, key string, at time.Time) (*idempotency.Record, error) {
	var rec *idempotency.Record
	err := tenant.Tx(ctx, s.deps.DB, companyID, func(ctx context.Context, tx bun.Tx) error {
		var err error
		rec, err = idempotency.Find(ctx, tx, companyID, key, at)
		return err
	})
	return rec, err
}
