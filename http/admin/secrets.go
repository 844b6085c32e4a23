package admin

import (
	"context"
	"errors"
	"net/http"

	"github.com/uptrace/bun"

	"oficina/http/wire"
	"oficina/schema/apierr"
	"oficina/schema/webhooks"
	"oficina/tenant"
)

// Re-sealing the webhook signing secrets under the first key of the ring
// (docs/operating.md, key rotation): `oficina admin secrets rekey` calls
// this route page after page.
func (s *Server) secretRoutes() {
	s.mux.HandleFunc("POST "+Prefix+"/secrets/rekey", s.rekeySecrets)
}

// Rekey limits: companies re-sealed per call.
const (
	defaultRekeyLimit = 100
	maxRekeyLimit     = 1000
)

type rekeyBody struct {
	// CompanyID confines the call to one company; empty: every company.
	CompanyID string `json:"company_id"`
	// After continues a previous call (its next_after).
	After string `json:"after"`
	Limit *int   `json:"limit"`
}

// SecretsRekeyed is the answer of a rekey call.
type SecretsRekeyed struct {
	Object    string                   `json:"object"` // "secrets_rekey"
	KeyID     string                   `json:"key_id"` // the ring's first key
	Companies int                      `json:"companies"`
	Endpoints int                      `json:"endpoints"`
	Failed    []webhooks.ResealFailure `json:"failed"`
	NextAfter string                   `json:"next_after"`
	HasMore   bool                     `json:"has_more"`
}

func (s *Server) rekeySecrets(w http.ResponseWriter, r *http.Request) {
	res, err := s.rekey(r)
	if err != nil {
		wire.WriteError(w, r, err)
		return
	}
	wire.WriteJSON(w, http.StatusOK, res)
}

func (s *Server) rekey(r *http.Request) (SecretsRekeyed, error) {
	in, err := decode[rekeyBody](r)
	if err != nil {
		return SecretsRekeyed{}, err
	}
	limit := defaultRekeyLimit
	if in.Limit != nil {
		if limit = *in.Limit; limit < 1 || limit > maxRekeyLimit {
			return SecretsRekeyed{}, apierr.Invalid("limit", apierr.OutOfRange)
		}
	}
	if s.deps.Secrets == nil {
		return SecretsRekeyed{}, apierr.Wrap(apierr.InternalError, errors.New("admin: rekey without a key ring"))
	}
	o := webhooks.ResealOptions{Ring: s.deps.Secrets, After: in.After, Limit: limit}
	if in.CompanyID != "" {
		err := tenant.Tx(r.Context(), s.deps.DB, in.CompanyID, func(ctx context.Context, tx bun.Tx) error {
			_, err := tenant.GetCompany(ctx, tx, in.CompanyID)
			return err
		})
		if err != nil {
			return SecretsRekeyed{}, err
		}
		o.Companies = []string{in.CompanyID}
	}
	res, err := webhooks.Reseal(r.Context(), s.deps.Workers, o)
	if err != nil {
		return SecretsRekeyed{}, err
	}
	if res.Failed == nil {
		res.Failed = []webhooks.ResealFailure{}
	}
	if len(res.Failed) > 0 {
		s.deps.Logger().Warn("secrets rekey: endpoints left as they were", "count", len(res.Failed), "first", res.Failed[0])
	}
	return SecretsRekeyed{Object: "secrets_rekey", KeyID: s.deps.Secrets.Primary(), Companies: res.Companies,
		Endpoints: res.Endpoints, Failed: res.Failed, NextAfter: res.Next, HasMore: res.More}, nil
}
