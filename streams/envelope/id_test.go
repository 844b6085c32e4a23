package envelope

import (
	"strings"
	"testing"
)

// Spec 6.2: event id is "evt_" + 32 hexadecimal characters.
func TestNewEventID_Shape(t *testing.T) {
	t.Parallel()
	seen := make(map[string]bool)
	for range 1000 {
		id := NewEventID()
		if !ValidEventID(id) {
			t.Fatalf("NewEventID() = %q, not valid", id)
		}
		if id != strings.ToLower(id) {
			t.Fatalf("NewEventID() = %q, not lowercase", id)
		}
		if seen[id] {
			t.Fatalf("NewEventID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestValidEventID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   string
		want bool
	}{
		{"evt_0123456789abcdef0123456789abcdef", true},
		{"evt_00000000000000000000000000000000", true},
		{"evt_0123456789ABCDEF0123456789abcdef", false},  // upper case
		{"evt_0123456789abcdef0123456789abcde", false},   // 31 hex
		{"evt_0123456789abcdef0123456789abcdef0", false}, // 33 hex
		{"evt_0123456789abcdef0123456789abcdeg", false},  // not hex
		{"msg_0123456789abcdef0123456789abcdef", false},
		{"EVT_0123456789abcdef0123456789abcdef", false},
		{"0123456789abcdef0123456789abcdef", false},
		{"evt_", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			if got := ValidEventID(tt.id); got != tt.want {
				t.Fatalf("ValidEventID(%q) = %v, want %v", tt.id, got, tt.want)
			}
		})
	}
}
