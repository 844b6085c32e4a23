package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"oficina/schema/webhooks"
)

// OAuth2 client credentials (issue 27 item 2): the bearer token an
// endpoint's deliveries carry, from its token URL (RFC 6749 4.4, client
// authenticated with HTTP Basic), through the destination guard's client.
// A token is kept until 30 s before it expires (a minute when the server
// says nothing) and asked again once when the receiver answers 401.

// errToken is an attempt that could not get its token; its reason is the
// attempt's error.
var errToken = errors.New("oauth2_token_failed")

// token is a cached bearer token.
type token struct {
	value string
	until time.Time
}

// tokenKey caches a token per endpoint and credentials: new credentials
// never reuse an old token.
func tokenKey(endpointID string, o *webhooks.OAuth2) [32]byte {
	return sha256.Sum256([]byte(endpointID + "\x00" + o.TokenURL + "\x00" + o.ClientID + "\x00" + o.ClientSecret + "\x00" + o.Scope))
}

// bearer is the endpoint's token: the cached one unless fresh, else a new
// one from the token URL.
func (d *Dispatcher) bearer(ctx context.Context, endpointID string, o *webhooks.OAuth2, fresh bool) (string, error) {
	key := tokenKey(endpointID, o)
	if v, ok := d.tokens.Load(key); ok && !fresh && d.cfg.WallNow().Before(v.(token).until) {
		return v.(token).value, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if o.Scope != "" {
		form.Set("scope", o.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("%w: %v", errToken, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(o.ClientID), url.QueryEscape(o.ClientSecret))
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errToken, err)
	}
	defer resp.Body.Close()
	var t struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&t)
	switch {
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("%w: the token URL answered %d", errToken, resp.StatusCode)
	case err != nil || t.AccessToken == "" || !strings.EqualFold(t.TokenType, "bearer"):
		return "", fmt.Errorf("%w: no bearer token in the answer", errToken)
	}
	life := time.Minute
	if t.ExpiresIn > 0 {
		life = max(time.Duration(t.ExpiresIn)*time.Second-30*time.Second, 0)
	}
	d.tokens.Store(key, token{value: t.AccessToken, until: d.cfg.WallNow().Add(life)})
	return t.AccessToken, nil
}
