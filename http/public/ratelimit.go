package public

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"oficina/schema/apierr"
	"oficina/tenant"
)

// authenticate is the throttle and the key check: an address that failed
// too often is refused before its key is looked at (5 item 3), and only
// failures are counted, so normal use never meets the throttle.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*tenant.Principal, error) {
	ip := s.clientIP(r)
	if wait, ok := s.throttle.Check(ip); !ok {
		w.Header().Set("Retry-After", seconds(wait))
		return nil, apierr.New(apierr.RateLimitExceeded)
	}
	// Two Authorization headers are two claims: a proxy may read the
	// other one, so neither is taken.
	auth := r.Header.Values("Authorization")
	tok, err := tenant.BearerToken(r.Header.Get("Authorization"))
	if err != nil || len(auth) > 1 {
		s.throttle.Failed(ip)
		return nil, apierr.New(apierr.APIKeyInvalid)
	}
	p, err := s.deps.Auth.Authenticate(r.Context(), tok, ip)
	if err != nil {
		if errors.Is(err, tenant.ErrInvalidKey) {
			s.throttle.Failed(ip)
			return nil, apierr.New(apierr.APIKeyInvalid)
		}
		return nil, err
	}
	return p, nil
}

// limit spends one request of the company's budget (part 8) and sets the
// RateLimit headers; a company without a ceiling (or on a plan without the
// API, whose ceiling is 0 and which the plan layer refuses next) is not
// counted and gets no headers. While the shared store is out of reach the
// limiter decides by this process's share of the ceiling (decision 0018),
// so the headers stay on every response through the counter; only a
// limiter error (a ceiling it cannot count) lets a request through
// without them, as refusing everyone would turn a bug into an outage.
func (s *Server) limit(w http.ResponseWriter, r *http.Request, p *tenant.Principal) error {
	if s.deps.Limiter == nil {
		return nil
	}
	ceiling := p.Company.RequestsPerMinute()
	if ceiling == nil || *ceiling <= 0 {
		return nil
	}
	d, err := s.deps.Limiter.Take(r.Context(), p.CompanyID(), *ceiling)
	if err != nil {
		s.deps.Logger().ErrorContext(r.Context(), "rate limit not counted; request let through",
			"company_id", p.CompanyID(), "error", err)
		return nil
	}
	h := w.Header()
	reset := strconv.Itoa(d.ResetSeconds())
	h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("RateLimit-Reset", reset)
	if !d.Allowed {
		h.Set("Retry-After", reset)
		return apierr.New(apierr.RateLimitExceeded)
	}
	return nil
}

// seconds renders a wait as whole seconds, rounded up (at least 1).
func seconds(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}
