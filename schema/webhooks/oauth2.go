package webhooks

import (
	"context"

	"oficina/schema/apierr"
)

// OAuth2 client credentials (issue 27 item 2): a receiver that wants a
// bearer token gets one on every delivery, which the dispatcher obtains from
// the endpoint's token URL with the client credentials grant (RFC 6749
// 4.4), keeps until it expires and asks again once when the receiver
// answers 401. The client secret is a secret of the company, sealed with
// the signing secrets; the token URL passes the destination rules.

// Limits of the OAuth2 settings.
const (
	MaxOAuth2Field  = 512
	MaxOAuth2Secret = 1024
)

// WebhookOAuth2Input is an endpoint's OAuth2 client credentials as set.
type WebhookOAuth2Input struct {
	TokenURL     string  `json:"token_url" api:"required" doc:"The authorization server's token endpoint: https and public, as an endpoint's URL."`
	ClientID     string  `json:"client_id" api:"required" doc:"The client id Oficina authenticates as."`
	ClientSecret string  `json:"client_secret" api:"required" doc:"Its secret; sealed at rest and never shown again."`
	Scope        *string `json:"scope" doc:"The scope to ask for, space-separated; none when absent."`
}

// WebhookOAuth2 is what an endpoint shows of its OAuth2 settings.
type WebhookOAuth2 struct {
	TokenURL string  `json:"token_url"`
	ClientID string  `json:"client_id"`
	Scope    *string `json:"scope"`
}

// OAuth2 is an endpoint's OAuth2 client credentials in clear, for the
// dispatcher: in memory only.
type OAuth2 struct {
	TokenURL, ClientID, ClientSecret, Scope string
}

// String hides the secret.
func (OAuth2) String() string { return "webhooks.OAuth2{…}" }

// checkOAuth2 adds the field errors of in (param oauth2.<member>).
func checkOAuth2(f *apierr.Fields, in *WebhookOAuth2Input) {
	for _, m := range []struct{ name, value string }{{"token_url", in.TokenURL}, {"client_id", in.ClientID}, {"client_secret", in.ClientSecret}} {
		limit := MaxOAuth2Field
		if m.name == "client_secret" {
			limit = MaxOAuth2Secret
		}
		switch {
		case m.value == "":
			f.Add("oauth2."+m.name, apierr.Required)
		case len(m.value) > limit || !fieldValue(m.value):
			f.Add("oauth2."+m.name, apierr.InvalidValue)
		}
	}
	if in.Scope != nil && (len(*in.Scope) > MaxOAuth2Field || !fieldValue(*in.Scope)) {
		f.Add("oauth2.scope", apierr.InvalidValue)
	}
}

// checkTokenURL checks the token URL as an endpoint's URL (spec 6.5), its
// refusal on oauth2.token_url.
func checkTokenURL(ctx context.Context, guard URLChecker, raw string) error {
	err := checkURL(ctx, guard, raw)
	if e := apierr.As(err); err != nil && e.Code == apierr.ValidationFailed {
		for i := range e.Fields {
			e.Fields[i].Param = "oauth2.token_url"
		}
	}
	return err
}

// oauth2View is what the endpoint shows of its OAuth2 settings.
func (e *Row) oauth2View() *WebhookOAuth2 {
	if e.OAuth2TokenURL == nil || e.OAuth2ClientID == nil {
		return nil
	}
	return &WebhookOAuth2{TokenURL: *e.OAuth2TokenURL, ClientID: *e.OAuth2ClientID, Scope: e.OAuth2Scope}
}

// setOAuth2 notes the clear part of in on the row (nil: removed).
func (e *Row) setOAuth2(in *WebhookOAuth2Input) {
	if in == nil {
		e.OAuth2TokenURL, e.OAuth2ClientID, e.OAuth2Scope = nil, nil, nil
		return
	}
	url, id := in.TokenURL, in.ClientID
	e.OAuth2TokenURL, e.OAuth2ClientID, e.OAuth2Scope = &url, &id, in.Scope
}

// OAuth2Of is the row's OAuth2 client credentials with their opened
// secret (nil: none).
func (e *Row) OAuth2Of(s Secrets) *OAuth2 {
	if e.OAuth2TokenURL == nil || e.OAuth2ClientID == nil || s.OAuth2ClientSecret == "" {
		return nil
	}
	o := &OAuth2{TokenURL: *e.OAuth2TokenURL, ClientID: *e.OAuth2ClientID, ClientSecret: s.OAuth2ClientSecret}
	if e.OAuth2Scope != nil {
		o.Scope = *e.OAuth2Scope
	}
	return o
}
