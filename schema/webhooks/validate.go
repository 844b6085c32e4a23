package webhooks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"oficina/schema/apierr"
	"oficina/schema/eventnames"
	"oficina/streams"
)

// Limits of the text fields.
const (
	MaxURLLength         = 2048
	MaxDescriptionLength = 10000
)

// URLChecker applies the destination rules of spec 6.5 to a URL;
// dispatch/destguard's Guard is the production one. A URL it refuses comes
// back as an error that is (or wraps) a Refusal.
type URLChecker interface {
	CheckURL(ctx context.Context, raw string) error
}

// Refusal is how a URLChecker says it refused a destination, as opposed to
// failing to check it: RefusalReason names the rule in the checker's words
// (not_https, userinfo, private_address, forbidden_hostname, unresolvable,
// invalid_url, …). The records know refusals by this behaviour, not by
// importing the guard that lives with the dispatcher.
type Refusal interface {
	error
	RefusalReason() string
}

// EventName is an entry of an endpoint's events: "*", a family wildcard
// ("sale.*") or a catalogued event type.
type EventName string

// Values are every name a subscription may list.
func (EventName) Values() []string {
	out := []string{streams.SubscribeAll}
	for _, f := range eventnames.Families() {
		out = append(out, f.Name+".*")
	}
	return append(out, eventnames.Names()...)
}

// EventType is the type of an event sent to endpoints: a catalogued name
// or ping.
type EventType string

// Values are the catalogued names and ping, sorted.
func (EventType) Values() []string {
	out := append(eventnames.Names(), streams.PingType)
	slices.Sort(out)
	return out
}

func eventNames(ns []EventName) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	return out
}

func asEventNames(ns []string) []EventName {
	out := make([]EventName, len(ns))
	for i, n := range ns {
		out[i] = EventName(n)
	}
	return out
}

// NormalizeEvents validates a subscription list (422 with param events) and
// returns it without duplicates, in the order given. Accepted: names of
// the catalogue (oficina/schema/events, asked through schema/eventnames),
// family wildcards such as "sale.*", or "*" alone. "ping" is not
// subscribable: every endpoint can be pinged.
func NormalizeEvents(names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, apierr.Invalid("events", apierr.Required)
	}
	out := make([]string, 0, len(names))
	for _, e := range names {
		if !eventnames.Subscribable(e) {
			return nil, apierr.Invalid("events", apierr.InvalidEvent)
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if slices.Contains(out, streams.SubscribeAll) && len(out) > 1 {
		return nil, apierr.Invalid("events", apierr.InvalidEvent)
	}
	return out, nil
}

// checkURL validates the URL's shape and, through the guard, its
// destination (https, no user information, public addresses only).
// CheckURL is the destination rule of Create and Update alone (spec 6.5).
// They apply it only once the rest of the body is valid and the caller may
// subscribe; a form uses it to show a refused URL beside the other fields'
// errors at once.
func CheckURL(ctx context.Context, guard URLChecker, raw string) error {
	return checkURL(ctx, guard, raw)
}

func checkURL(ctx context.Context, guard URLChecker, raw string) error {
	switch {
	case strings.TrimSpace(raw) == "":
		return apierr.Invalid("url", apierr.Required)
	case len(raw) > MaxURLLength:
		return apierr.Invalid("url", apierr.TooLong)
	}
	err := guard.CheckURL(ctx, raw)
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[Refusal](err); ok {
		return &apierr.Error{Code: apierr.ValidationFailed, Fields: []apierr.FieldError{{Param: "url", Code: URLRefusalCode(err)}}, Cause: err}
	}
	return err
}

// urlCodes name a refused URL's cause as the errors[].code of param url
// (spec 4.6 and 6.5): what the integrator has to change. The guard's finer
// reasons (kept in the delivery log) fold into them; the rest — unparsable,
// no host, bad port, a host name that is not one, an IPv4 address spelled
// other than as a dotted quad — is invalid_url.
var urlCodes = map[string]apierr.FieldCode{
	"not_https":          apierr.NotHTTPS,
	"userinfo":           apierr.Userinfo,
	"private_address":    apierr.NotPublic, // private, loopback, reserved, metadata addresses
	"forbidden_hostname": apierr.NotPublic, // localhost, names without a dot, .local, .internal, …
	"unresolvable":       apierr.Unresolvable,
}

// URLRefusalCode is the errors[].code of a URL the destination guard
// refused: not_https, userinfo, not_public, unresolvable or invalid_url.
func URLRefusalCode(err error) apierr.FieldCode {
	if re, ok := errors.AsType[Refusal](err); ok {
		if c, ok := urlCodes[re.RefusalReason()]; ok {
			return c
		}
	}
	return apierr.InvalidURL
}

func checkDescription(d string) error {
	if utf8.RuneCountInString(d) > MaxDescriptionLength {
		return apierr.Invalid("description", apierr.TooLong)
	}
	return nil
}
