package envelope

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

const (
	// APIVersion is the contract version every body carries (spec 9).
	APIVersion = "v1"
	// MaxBodyBytes caps the whole serialized body, not just the object
	// (spec 6.3 rule 4, part 8: "Webhook delivery body: 256 KB").
	MaxBodyBytes = 256 * 1024
	// TimestampLayout is the spec 2.1 shape: UTC, whole seconds, literal Z.
	// Unlike time.RFC3339 it cannot render a numeric offset if a non-UTC
	// value slips through.
	TimestampLayout = "2006-01-02T15:04:05Z"

	updatedSuffix = ".updated"
)

// Event is the envelope. Field order here is the order on the wire.
type Event struct {
	// ID is the event id; the same on every attempt and manual resend.
	ID string `json:"id"`
	// Type is the event name, e.g. "sale.updated".
	Type string `json:"type"`
	// APIVersion is always APIVersion.
	APIVersion string `json:"api_version"`
	// Timestamp is when the fact happened, in TimestampLayout; it never
	// changes between attempts and is what receivers order by.
	Timestamp string `json:"timestamp"`
	// OrganizationID is the company the event belongs to.
	OrganizationID string `json:"organization_id"`
	Data           Data   `json:"data"`
}

// Data is the "data" member of the envelope.
type Data struct {
	// Object is the resource as its GET returned it when the write happened,
	// or only its "object" and "id" when ObjectTruncated is set.
	Object json.RawMessage `json:"object"`
	// ChangedFields is non-nil exactly on ".updated" events, so it is rendered
	// (possibly as []) there and omitted elsewhere; omitzero omits only nil.
	ChangedFields []string `json:"changed_fields,omitzero"`
	// ObjectTruncated is rendered only when true (spec 6.2).
	ObjectTruncated bool `json:"object_truncated,omitempty"`
}

// IsUpdate reports whether eventType is an ".updated" event, the only kind
// that carries changed_fields (spec 6.2).
func IsUpdate(eventType string) bool {
	return strings.HasSuffix(eventType, updatedSuffix)
}

// FormatTimestamp renders t in UTC, truncated (not rounded) to the second, so
// the timestamp never claims a later time than the fact.
func FormatTimestamp(t time.Time) string {
	return t.UTC().Truncate(time.Second).Format(TimestampLayout)
}

// encode serializes e exactly as it is published and delivered. HTML escaping
// is off: the body is never embedded in HTML, and escaping "<", ">" and "&"
// to six-byte sequences would both change objects as GET returns them and
// spend the 256 KB budget.
func encode(e *Event) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, fmt.Errorf("envelope: encode %s: %w", e.Type, err)
	}
	// Encoder.Encode ends the value with a newline that is not part of the body.
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
