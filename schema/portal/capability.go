// Package portal holds the sessions of the company webhook portal (issue
// 18, docs/portal.md): a one-time link, minted by the dashboard or by an
// API key with webhook permissions, becomes a short-lived session of one
// company with capabilities the server enforces. Only hashes of the link
// and session tokens are stored. A session acts as whoever minted it, as
// they stand at each request: the portal's reads and writes run in that
// company's transaction (tenant.Tx) through the same schema functions as
// the API, so a session of one company finds nothing of another.
package portal

import (
	"slices"

	"oficina/schema/apierr"
	"oficina/tenant"
)

// Capability is what a session may do beyond reading.
type Capability string

// Capabilities.
const (
	// ReadOnly: endpoints, health, the catalogue and the delivery log,
	// nothing else; it cannot be combined with a capability that writes.
	ReadOnly Capability = "read_only"
	// ManageEndpoints: create, edit, enable, disable, delete, rotate the
	// secret, ping.
	ManageEndpoints Capability = "manage_endpoints"
	// ViewSecret: reveal an endpoint's signing secret.
	ViewSecret Capability = "view_secret"
	// Recover: resend one delivery and recover a time range.
	Recover Capability = "recover"
)

// Values are the capabilities (an enum of the OpenAPI document).
func (Capability) Values() []string {
	return []string{string(ReadOnly), string(ManageEndpoints), string(ViewSecret), string(Recover)}
}

// SchemaName names the enum in the OpenAPI document.
func (Capability) SchemaName() string { return "PortalCapability" }

// permissions are the key permissions a capability needs at mint time:
// a key cannot open a session that does more than the key itself.
func (c Capability) permissions() []tenant.Permission {
	switch c {
	case ManageEndpoints:
		return []tenant.Permission{"webhooks:create", "webhooks:update", "webhooks:delete"}
	case ViewSecret, Recover:
		return []tenant.Permission{"webhooks:update"}
	}
	return nil
}

// Permissions are the key permissions needed to mint a session with caps:
// webhooks:read always, and what each capability adds.
func Permissions(caps []Capability) []tenant.Permission {
	out := []tenant.Permission{"webhooks:read"}
	for _, c := range caps {
		for _, p := range c.permissions() {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// normalize validates a capability list (422 param capabilities) and
// returns it sorted without duplicates; none means read_only.
func normalize(caps []Capability) ([]Capability, error) {
	if len(caps) == 0 {
		return []Capability{ReadOnly}, nil
	}
	out := make([]Capability, 0, len(caps))
	for _, c := range caps {
		if !slices.Contains(c.Values(), string(c)) {
			return nil, apierr.Invalid("capabilities", apierr.InvalidValue)
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if slices.Contains(out, ReadOnly) && (slices.Contains(out, ManageEndpoints) || slices.Contains(out, Recover)) {
		return nil, apierr.Invalid("capabilities", apierr.NotAllowed)
	}
	slices.Sort(out)
	return out, nil
}
