package envelope_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"oficina/streams/envelope"
)

// Issue 26 item 3: a thin body keeps the id, type, timestamp and
// changed_fields of the envelope, reduces data.object to {object, id},
// drops object_truncated, and is the same bytes every time; a ping (no id)
// is already thin.
func TestThinKeepsTheEnvelopeAndReducesTheObject(t *testing.T) {
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		params envelope.Params
		want   string
	}{
		{"an update", envelope.Params{ID: "evt_0123456789abcdef0123456789abcdef", Type: "sale.updated", OrganizationID: "co_1",
			OccurredAt: at, Object: json.RawMessage(`{"object":"sale","id":"sal_1","notes":"x","total_cents":10}`),
			ChangedFields: []string{"notes"}},
			`{"id":"evt_0123456789abcdef0123456789abcdef","type":"sale.updated","api_version":"v1","timestamp":"2026-11-20T12:00:00Z","organization_id":"co_1","data":{"object":{"object":"sale","id":"sal_1"},"changed_fields":["notes"]}}`},
		{"summarized", envelope.Params{ID: "evt_0123456789abcdef0123456789abcdee", Type: "sale.created", OrganizationID: "co_1",
			OccurredAt: at, Object: json.RawMessage(`{"object":"sale","id":"sal_1","notes":"x"}`), Summarize: true},
			`{"id":"evt_0123456789abcdef0123456789abcdee","type":"sale.created","api_version":"v1","timestamp":"2026-11-20T12:00:00Z","organization_id":"co_1","data":{"object":{"object":"sale","id":"sal_1"}}}`},
	} {
		_, body, err := envelope.Build(tc.params)
		if err != nil {
			t.Fatal(err)
		}
		thin, err := envelope.Thin(body)
		if err != nil || string(thin) != tc.want {
			t.Errorf("%s: %s (%v)\nwant %s", tc.name, thin, err, tc.want)
		}
		again, _ := envelope.Thin(body)
		if string(again) != string(thin) {
			t.Errorf("%s: not the same bytes twice", tc.name)
		}
	}
	ping := `{"id":"evt_0123456789abcdef0123456789abcdef","type":"ping","api_version":"v1","timestamp":"2026-11-20T12:00:00Z","organization_id":"co_1","data":{"object":{"object":"ping","webhook_endpoint_id":"we_1"}}}`
	if thin, err := envelope.Thin([]byte(ping)); err != nil || string(thin) != ping {
		t.Errorf("ping: %s (%v)", thin, err)
	}
	if _, err := envelope.Thin([]byte(`{"data":`)); err == nil || !strings.Contains(err.Error(), "thin") {
		t.Errorf("a broken body: %v", err)
	}
}
