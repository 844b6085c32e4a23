package envelope

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

const (
	eventIDPrefix = "evt_"
	eventIDHexLen = 32
	eventIDLen    = len(eventIDPrefix) + eventIDHexLen
)

// EventIDPattern is the shape ValidEventID takes, for schemas and
// filters.
const EventIDPattern = `^evt_[0-9a-f]{32}$`

// NewEventID returns "evt_" followed by 32 lowercase hexadecimal characters
// (128 random bits). The id is also the webhook-id header and the JetStream
// Nats-Msg-Id, so it must be unguessable and collision-free across companies.
func NewEventID() string {
	var b [eventIDHexLen / 2]byte
	// crypto/rand.Read never returns an error since Go 1.24; it aborts the
	// program if the system source fails, which is the right outcome for an id
	// generator.
	_, _ = rand.Read(b[:])
	return eventIDPrefix + hex.EncodeToString(b[:])
}

// ValidEventID reports whether s has the exact shape NewEventID produces.
// Upper-case hex is refused so one event cannot have two spellings.
func ValidEventID(s string) bool {
	if len(s) != eventIDLen || !strings.HasPrefix(s, eventIDPrefix) {
		return false
	}
	for _, c := range []byte(s[len(eventIDPrefix):]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
