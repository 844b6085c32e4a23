package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// Errors returned by Build; each is wrapped with detail.
var (
	// ErrInvalid means the parameters cannot form a valid envelope.
	ErrInvalid = errors.New("envelope: invalid event")
	// ErrNoIdentity means the object lacks the "object" or "id" member that
	// the summarized form needs.
	ErrNoIdentity = errors.New("envelope: object has no object/id to summarize")
	// ErrTooLarge means even the summarized body exceeds MaxBodyBytes, which
	// only absurd ids, types or changed_fields can cause.
	ErrTooLarge = errors.New("envelope: body exceeds cap even when summarized")
)

// Params describe one recorded fact.
type Params struct {
	// ID is the event id; empty means Build generates one with NewEventID.
	// Pass the stored id when rebuilding an event so it stays the same.
	ID             string
	Type           string
	OrganizationID string
	// OccurredAt is when the write happened; rendered by FormatTimestamp.
	OccurredAt time.Time
	// Object is the resource exactly as its GET returns it: a JSON object with
	// at least "object" (the kind) and, except for ping, "id".
	Object json.RawMessage
	// ChangedFields is used only when Type ends in ".updated", and is then
	// copied, sorted, de-duplicated and stripped of "updated_at" (spec 6.3
	// rule 1) so the rule holds whatever the caller passes. It is ignored on
	// other types, so one write's params can feed several events (rule 2).
	ChangedFields []string
	// Summarize marks writes whose events are always summarized (spec 6.3
	// rule 5): the messaging assistant, automations, bank import and
	// reconciliation, automatic routines, and any write whose object could
	// not be built.
	Summarize bool
}

// Build assembles the envelope and returns it with the exact body bytes to
// publish, sign and deliver. When the whole body would exceed MaxBodyBytes the
// object is replaced by its summary and object_truncated is set (spec 6.3
// rule 4); the returned Event always matches the returned body.
func Build(p Params) (Event, []byte, error) {
	ev, fields, err := newEvent(p)
	if err != nil {
		return Event{}, nil, err
	}
	if p.Summarize {
		if err := summarize(&ev, fields); err != nil {
			return Event{}, nil, err
		}
		// Summarized updates carry an empty changed_fields (rule 5).
		if ev.Data.ChangedFields != nil {
			ev.Data.ChangedFields = []string{}
		}
	}
	body, err := encode(&ev)
	if err != nil {
		return Event{}, nil, err
	}
	if len(body) <= MaxBodyBytes {
		return ev, body, nil
	}
	if !ev.Data.ObjectTruncated {
		// Over the cap: only the object shrinks; changed_fields stays, since
		// it is still true and tells the receiver what to fetch.
		if err := summarize(&ev, fields); err != nil {
			return Event{}, nil, err
		}
		if body, err = encode(&ev); err != nil {
			return Event{}, nil, err
		}
		if len(body) <= MaxBodyBytes {
			return ev, body, nil
		}
	}
	return Event{}, nil, fmt.Errorf("%w: %d bytes, cap %d", ErrTooLarge, len(body), MaxBodyBytes)
}

// newEvent validates p and returns the full (unsummarized) envelope together
// with the object's top-level members, parsed once for summarize.
func newEvent(p Params) (Event, map[string]json.RawMessage, error) {
	id := p.ID
	if id == "" {
		id = NewEventID()
	} else if !ValidEventID(id) {
		return Event{}, nil, fmt.Errorf("%w: id %q is not evt_ + 32 lowercase hex", ErrInvalid, id)
	}
	if !validType(p.Type) {
		return Event{}, nil, fmt.Errorf("%w: type %q", ErrInvalid, p.Type)
	}
	if p.OrganizationID == "" || !utf8.ValidString(p.OrganizationID) {
		return Event{}, nil, fmt.Errorf("%w: organization id %q", ErrInvalid, p.OrganizationID)
	}
	if p.OccurredAt.IsZero() {
		return Event{}, nil, fmt.Errorf("%w: zero timestamp", ErrInvalid)
	}
	// Years outside 0000-9999 would not fit the fixed-width layout.
	if y := p.OccurredAt.UTC().Year(); y < 0 || y > 9999 {
		return Event{}, nil, fmt.Errorf("%w: timestamp year %d", ErrInvalid, y)
	}
	object, fields, err := parseObject(p.Object)
	if err != nil {
		return Event{}, nil, err
	}
	ev := Event{
		ID:             id,
		Type:           p.Type,
		APIVersion:     APIVersion,
		Timestamp:      FormatTimestamp(p.OccurredAt),
		OrganizationID: p.OrganizationID,
		Data:           Data{Object: object},
	}
	if IsUpdate(p.Type) {
		ev.Data.ChangedFields = normalizeFields(p.ChangedFields)
	}
	return ev, fields, nil
}

// parseObject checks that raw is a JSON object whose "object" member is a
// non-empty string, and returns it compacted (so the Event holds the bytes
// that are sent) with its top-level members.
func parseObject(raw json.RawMessage) (json.RawMessage, map[string]json.RawMessage, error) {
	// encoding/json passes invalid UTF-8 inside strings through untouched when
	// compacting a RawMessage; refuse it rather than send a body receivers
	// may fail to parse.
	if !utf8.Valid(raw) {
		return nil, nil, fmt.Errorf("%w: object is not valid UTF-8", ErrInvalid)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, nil, fmt.Errorf("%w: object: %w", ErrInvalid, err)
	}
	if fields == nil { // the literal null
		return nil, nil, fmt.Errorf("%w: object is null", ErrInvalid)
	}
	var kind string
	if err := json.Unmarshal(fields["object"], &kind); err != nil || kind == "" {
		return nil, nil, fmt.Errorf("%w: object has no \"object\" kind string", ErrInvalid)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, nil, fmt.Errorf("%w: object: %w", ErrInvalid, err)
	}
	return buf.Bytes(), fields, nil
}

// summarize replaces the object with {"object": <kind>, "id": <id>}, keeping
// the original JSON values of both, and marks it truncated.
func summarize(ev *Event, fields map[string]json.RawMessage) error {
	kind := fields["object"] // checked by parseObject
	id, ok := fields["id"]
	if !ok || !isScalarID(id) {
		return fmt.Errorf("%w: %s event %s", ErrNoIdentity, ev.Type, ev.ID)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"object":`)
	if err := json.Compact(&buf, kind); err != nil {
		return fmt.Errorf("envelope: summarize kind: %w", err)
	}
	buf.WriteString(`,"id":`)
	if err := json.Compact(&buf, id); err != nil {
		return fmt.Errorf("envelope: summarize id: %w", err)
	}
	buf.WriteByte('}')
	ev.Data.Object = buf.Bytes()
	ev.Data.ObjectTruncated = true
	return nil
}

// isScalarID accepts a non-empty string or a number: what an id can be.
func isScalarID(raw json.RawMessage) bool {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return v != ""
	case float64:
		return true
	}
	return false
}

// normalizeFields enforces spec 6.3 rule 1 on a caller's list: alphabetical,
// no duplicates, never updated_at. The result is non-nil so an update with no
// listed field still renders "changed_fields": [].
func normalizeFields(in []string) []string {
	out := make([]string, 0, len(in))
	for _, f := range in {
		if f != updatedAtField {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// validType accepts dot-separated tokens of [a-z0-9_] ("ping",
// "financial_transaction.updated"). The type is also a JetStream subject
// suffix, where spaces, "*" and ">" would change the meaning of a subject.
func validType(t string) bool {
	if t == "" {
		return false
	}
	prevDot := true // no leading dot
	for _, c := range []byte(t) {
		switch {
		case c == '.':
			if prevDot {
				return false
			}
			prevDot = true
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_':
			prevDot = false
		default:
			return false
		}
	}
	return !prevDot // no trailing dot
}
