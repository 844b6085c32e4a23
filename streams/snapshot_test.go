package streams_test

import (
	"encoding/json"
	"slices"
	"testing"

	"oficina/streams"
)

// Issue 28 item 2: every update asks the one question "what changed?" of a
// Snapshot. It is taken when Snap is called, so a write that changes a
// slice the representation shares with its row is still seen as a change;
// updated_at alone is no change (spec 6.3 rules 1 and 3).
func TestASnapshotSeesWhatTheWriteChangesAfterIt(t *testing.T) {
	t.Parallel()
	type view struct {
		Items     []string `json:"items"`
		Notes     string   `json:"notes"`
		UpdatedAt string   `json:"updated_at"`
	}
	row := view{Items: []string{"a", "b"}, Notes: "n", UpdatedAt: "2026-01-01T00:00:00Z"}
	before, err := streams.Snap(row)
	if err != nil {
		t.Fatal(err)
	}
	if fields, err := before.Changed(row); err != nil || len(fields) != 0 {
		t.Fatalf("unchanged: %v %v, want none", fields, err)
	}
	row.UpdatedAt = "2026-01-02T00:00:00Z"
	if fields, err := before.Changed(row); err != nil || len(fields) != 0 {
		t.Fatalf("updated_at only: %v %v, want none", fields, err)
	}
	row.Items[1] = "c" // the snapshot's view shared this array
	row.Notes = "m"
	fields, err := before.Changed(row)
	if err != nil || !slices.Equal(fields, []string{"items", "notes"}) {
		t.Fatalf("changed: %v %v, want [items notes]", fields, err)
	}
	b, err := json.Marshal(struct {
		Before streams.Snapshot `json:"before"`
	}{before})
	if err != nil || string(b) != `{"before":{"items":["a","b"],"notes":"n","updated_at":"2026-01-01T00:00:00Z"}}` {
		t.Fatalf("as JSON: %s %v", b, err)
	}
}
