package webhooks

import (
	"net/http"
	"slices"
	"strings"

	"oficina/schema/apierr"
)

// Custom headers (issue 27 item 2): what an endpoint behind an API gateway
// needs to be let in (X-Api-Key, an Authorization of its own), sent with
// every delivery. Their values are secrets of the company: sealed with the
// signing secrets, opened by the dispatcher only, never shown again.

// Limits of an endpoint's custom headers.
const (
	MaxHeaders     = 10
	MaxHeaderName  = 64
	MaxHeaderValue = 1024
)

// reservedHeaders are the headers a delivery sets itself, or that HTTP
// gives a meaning a value of the company's must not change.
var reservedHeaders = []string{
	"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature", "Content-Type", "Content-Length", "User-Agent", "Host",
	"Connection", "Keep-Alive", "Transfer-Encoding", "Te", "Trailer", "Upgrade", "Expect", "Proxy-Authorization",
	"Proxy-Connection", "Content-Encoding", "Accept-Encoding",
}

// checkHeaders adds a field error for each header of hs that cannot be sent
// (param headers.<name>), and returns the names, canonical and sorted.
func checkHeaders(f *apierr.Fields, hs map[string]string) []string {
	if len(hs) > MaxHeaders {
		f.Add("headers", apierr.TooLong)
		return nil
	}
	names := make([]string, 0, len(hs))
	for name, value := range hs {
		param := "headers." + name
		canon := http.CanonicalHeaderKey(name)
		switch {
		case name == "" || len(name) > MaxHeaderName || !token(name):
			f.Add(param, apierr.InvalidValue)
		case slices.Contains(reservedHeaders, canon) || strings.HasPrefix(canon, "Webhook-"):
			f.Add(param, apierr.InvalidValue)
		case value == "" || len(value) > MaxHeaderValue || !fieldValue(value):
			f.Add(param, apierr.InvalidValue)
		case slices.Contains(names, canon):
			f.Add(param, apierr.InvalidValue) // the same header twice, in two spellings
		default:
			names = append(names, canon)
		}
	}
	slices.Sort(names)
	return names
}

// canonical is hs with its names in canonical form (what is sealed and sent).
func canonical(hs map[string]string) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := make(map[string]string, len(hs))
	for k, v := range hs {
		out[http.CanonicalHeaderKey(k)] = v
	}
	return out
}

// token reports whether s is an HTTP token (RFC 9110 tchar).
func token(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// fieldValue reports whether s is a header value of visible ASCII and
// inner spaces (no line break, no control character, no edge space).
func fieldValue(s string) bool {
	if strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' || r >= 0x7f {
			return false
		}
	}
	return true
}
