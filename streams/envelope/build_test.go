package envelope

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const testID = "evt_0123456789abcdef0123456789abcdef"

// brt is a non-UTC zone, to show the timestamp is converted (spec 2.1).
var brt = time.FixedZone("BRT", -3*60*60)

func baseParams() Params {
	return Params{
		ID:             testID,
		Type:           "sale.updated",
		OrganizationID: "org_42",
		OccurredAt:     time.Date(2024, 3, 5, 7, 8, 9, 999_000_000, brt),
		Object:         json.RawMessage(`{"object":"sale","id":"sale_1","total_cents":1500}`),
	}
}

// Spec 6.2 body: field names, order, presence rules; golden bytes.
func TestBuild_JSONShapeGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params func(p *Params)
		want   string
	}{
		{
			name: "updated event carries sorted changed_fields without updated_at",
			params: func(p *Params) {
				p.Object = json.RawMessage(`{ "object": "sale", "id": "sale_1",
					"notes": "<b>A & B</b>", "total_cents": 1500 }`)
				p.ChangedFields = []string{"total_cents", "notes", "updated_at", "notes"}
			},
			want: `{"id":"evt_0123456789abcdef0123456789abcdef","type":"sale.updated","api_version":"v1",` +
				`"timestamp":"2024-03-05T10:08:09Z","organization_id":"org_42","data":{"object":` +
				`{"object":"sale","id":"sale_1","notes":"<b>A & B</b>","total_cents":1500},` +
				`"changed_fields":["notes","total_cents"]}}`,
		},
		{
			name:   "updated event with no listed field renders an empty list",
			params: func(p *Params) {},
			want: `{"id":"evt_0123456789abcdef0123456789abcdef","type":"sale.updated","api_version":"v1",` +
				`"timestamp":"2024-03-05T10:08:09Z","organization_id":"org_42","data":{"object":` +
				`{"object":"sale","id":"sale_1","total_cents":1500},"changed_fields":[]}}`,
		},
		{
			name: "non-update event has no changed_fields even if given",
			params: func(p *Params) {
				p.Type = "sale.created"
				p.ChangedFields = []string{"total_cents"}
			},
			want: `{"id":"evt_0123456789abcdef0123456789abcdef","type":"sale.created","api_version":"v1",` +
				`"timestamp":"2024-03-05T10:08:09Z","organization_id":"org_42","data":{"object":` +
				`{"object":"sale","id":"sale_1","total_cents":1500}}}`,
		},
		{
			name: "ping carries its endpoint and no id",
			params: func(p *Params) {
				p.Type = "ping"
				p.Object = json.RawMessage(`{"object":"ping","webhook_endpoint_id":"we_1"}`)
			},
			want: `{"id":"evt_0123456789abcdef0123456789abcdef","type":"ping","api_version":"v1",` +
				`"timestamp":"2024-03-05T10:08:09Z","organization_id":"org_42","data":{"object":` +
				`{"object":"ping","webhook_endpoint_id":"we_1"}}}`,
		},
		{
			name: "summarized update",
			params: func(p *Params) {
				p.ChangedFields = []string{"total_cents"}
				p.Summarize = true
			},
			want: `{"id":"evt_0123456789abcdef0123456789abcdef","type":"sale.updated","api_version":"v1",` +
				`"timestamp":"2024-03-05T10:08:09Z","organization_id":"org_42","data":{"object":` +
				`{"object":"sale","id":"sale_1"},"changed_fields":[],"object_truncated":true}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := baseParams()
			tt.params(&p)
			ev, body, err := Build(p)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if string(body) != tt.want {
				t.Fatalf("body:\n got %s\nwant %s", body, tt.want)
			}
			assertRoundTrip(t, ev, body)
		})
	}
}

// Spec 2.1: timestamps are UTC, whole seconds, trailing Z.
func TestBuild_TimestampFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		at   time.Time
		want string
	}{
		{"UTC", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "2024-01-02T03:04:05Z"},
		{"offset converted to UTC", time.Date(2024, 12, 31, 22, 30, 0, 0, brt), "2025-01-01T01:30:00Z"},
		{"fraction truncated, not rounded", time.Date(2024, 1, 2, 3, 4, 5, 999_999_999, time.UTC), "2024-01-02T03:04:05Z"},
		{"local-clock value", time.Unix(1700000000, 123).In(time.Local), "2023-11-14T22:13:20Z"},
		{"year 1", time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), "0001-01-01T00:00:01Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := baseParams()
			p.OccurredAt = tt.at
			ev, body, err := Build(p)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if ev.Timestamp != tt.want {
				t.Fatalf("Timestamp = %q, want %q", ev.Timestamp, tt.want)
			}
			if !strings.Contains(string(body), `"timestamp":"`+tt.want+`"`) {
				t.Fatalf("body lacks timestamp %q: %s", tt.want, body)
			}
			if _, err := time.Parse(time.RFC3339, ev.Timestamp); err != nil {
				t.Fatalf("timestamp is not RFC 3339: %v", err)
			}
		})
	}
}

// Spec 6.3 rule 4 and part 8: the whole body is capped at 256 KB = 262,144
// bytes; above it the object is reduced to object and id.
func TestBuild_BodyCapAt256KB(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"sale.created", "sale.updated"} {
		t.Run(typ+"/body of exactly 262144 bytes is kept whole", func(t *testing.T) {
			t.Parallel()
			p := paddedParams(t, typ, 0)
			ev, body, err := Build(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(body) != MaxBodyBytes {
				t.Fatalf("len(body) = %d, want exactly %d", len(body), MaxBodyBytes)
			}
			if ev.Data.ObjectTruncated || strings.Contains(string(body), "object_truncated") {
				t.Fatal("object truncated at exactly the cap")
			}
			if string(ev.Data.Object) != string(p.Object) {
				t.Fatal("object changed although it fits")
			}
			assertRoundTrip(t, ev, body)
		})
		t.Run(typ+"/body of 262145 bytes truncates", func(t *testing.T) {
			t.Parallel()
			p := paddedParams(t, typ, 1)
			ev, body, err := Build(p)
			if err != nil {
				t.Fatal(err)
			}
			if !ev.Data.ObjectTruncated {
				t.Fatalf("not truncated; len(body) = %d", len(body))
			}
			if got, want := string(ev.Data.Object), `{"object":"sale","id":"sale_1"}`; got != want {
				t.Fatalf("object = %s, want %s", got, want)
			}
			want := `{"id":"evt_0123456789abcdef0123456789abcdef","type":"` + typ + `","api_version":"v1",` +
				`"timestamp":"2024-03-05T10:08:09Z","organization_id":"org_42","data":{"object":` +
				`{"object":"sale","id":"sale_1"},`
			if IsUpdate(typ) {
				// Rule 4 reduces only the object; changed_fields stays true.
				want += `"changed_fields":["notes","total_cents"],`
			}
			want += `"object_truncated":true}}`
			if string(body) != want {
				t.Fatalf("body:\n got %s\nwant %s", body, want)
			}
			assertRoundTrip(t, ev, body)
		})
	}
}

// The cap counts bytes as sent: multi-byte UTF-8 counts per byte, and "<>&"
// are not escaped into six-byte sequences that would eat the budget.
func TestBuild_BodyCapCountsBytesAsSent(t *testing.T) {
	t.Parallel()
	p := paddedParams(t, "sale.created", 0)
	// Swap three one-byte "x" for one three-byte "€" (same byte count) and
	// three more for "<>&".
	p.Object = json.RawMessage(strings.Replace(string(p.Object), "xxxxxx", "€<>&", 1))
	_, body, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) != MaxBodyBytes || !strings.Contains(string(body), "€<>&") {
		t.Fatalf("len(body) = %d, want %d with the text unescaped", len(body), MaxBodyBytes)
	}
}

// Spec 6.3 rule 5: writes by the assistant, automations, bank import and
// automatic routines always carry object and id only, object_truncated true,
// and an empty changed_fields on updates.
func TestBuild_SummarizedWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		typ        string
		object     string
		fields     []string
		wantObject string
		wantFields []string
	}{
		{"update has empty changed_fields", "financial_transaction.updated",
			`{"object":"financial_transaction","id":"ft_9","status":"overdue","amount_cents":100}`,
			[]string{"status"}, `{"object":"financial_transaction","id":"ft_9"}`, []string{}},
		{"non-update has no changed_fields", "task.created",
			`{"id":"t_1","title":"Call back","object":"task"}`,
			nil, `{"object":"task","id":"t_1"}`, nil},
		{"numeric id keeps its JSON value", "client.updated",
			`{"object":"client","id":12345678901234567890,"name":"A"}`,
			nil, `{"object":"client","id":12345678901234567890}`, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := baseParams()
			p.Type = tt.typ
			p.Object = json.RawMessage(tt.object)
			p.ChangedFields = tt.fields
			p.Summarize = true
			ev, body, err := Build(p)
			if err != nil {
				t.Fatal(err)
			}
			if !ev.Data.ObjectTruncated || string(ev.Data.Object) != tt.wantObject {
				t.Fatalf("data = %s / truncated %v, want %s", ev.Data.Object, ev.Data.ObjectTruncated, tt.wantObject)
			}
			if !reflect.DeepEqual(ev.Data.ChangedFields, tt.wantFields) {
				t.Fatalf("changed_fields = %#v, want %#v", ev.Data.ChangedFields, tt.wantFields)
			}
			assertRoundTrip(t, ev, body)
		})
	}
}

func TestBuild_GeneratesIDWhenEmpty(t *testing.T) {
	t.Parallel()
	p := baseParams()
	p.ID = ""
	ev, _, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	if !ValidEventID(ev.ID) {
		t.Fatalf("generated id %q is not valid", ev.ID)
	}
}

// Spec 6.2: the id is the same on every attempt and resend, so rebuilding
// from the stored parameters gives the same bytes.
func TestBuild_IsDeterministicForStoredID(t *testing.T) {
	t.Parallel()
	_, a, err := Build(baseParams())
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := Build(baseParams())
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatalf("two builds differ:\n%s\n%s", a, b)
	}
}

func TestBuild_Rejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params func(p *Params)
		want   error
	}{
		{"malformed id", func(p *Params) { p.ID = "evt_123" }, ErrInvalid},
		{"upper-case id", func(p *Params) { p.ID = strings.ToUpper(testID) }, ErrInvalid},
		{"empty type", func(p *Params) { p.Type = "" }, ErrInvalid},
		{"type with subject wildcard", func(p *Params) { p.Type = "sale.>" }, ErrInvalid},
		{"type with space", func(p *Params) { p.Type = "sale updated" }, ErrInvalid},
		{"type with empty token", func(p *Params) { p.Type = "sale..updated" }, ErrInvalid},
		{"type with trailing dot", func(p *Params) { p.Type = "sale." }, ErrInvalid},
		{"empty organization", func(p *Params) { p.OrganizationID = "" }, ErrInvalid},
		{"zero time", func(p *Params) { p.OccurredAt = time.Time{} }, ErrInvalid},
		{"year beyond 9999", func(p *Params) { p.OccurredAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, ErrInvalid},
		{"object missing", func(p *Params) { p.Object = nil }, ErrInvalid},
		{"object null", func(p *Params) { p.Object = json.RawMessage(`null`) }, ErrInvalid},
		{"object is an array", func(p *Params) { p.Object = json.RawMessage(`[{"object":"sale"}]`) }, ErrInvalid},
		{"object broken", func(p *Params) { p.Object = json.RawMessage(`{"object":"sale"`) }, ErrInvalid},
		{"object with trailing data", func(p *Params) { p.Object = json.RawMessage(`{"object":"sale"}{}`) }, ErrInvalid},
		{"object invalid UTF-8", func(p *Params) { p.Object = json.RawMessage("{\"object\":\"sale\",\"n\":\"\xff\"}") }, ErrInvalid},
		{"object without kind", func(p *Params) { p.Object = json.RawMessage(`{"id":"sale_1"}`) }, ErrInvalid},
		{"kind not a string", func(p *Params) { p.Object = json.RawMessage(`{"object":1,"id":"sale_1"}`) }, ErrInvalid},
		{"kind matched only case-insensitively", func(p *Params) { p.Object = json.RawMessage(`{"Object":"sale"}`) }, ErrInvalid},
		{"summarize without id", func(p *Params) {
			p.Object = json.RawMessage(`{"object":"ping","webhook_endpoint_id":"we_1"}`)
			p.Summarize = true
		}, ErrNoIdentity},
		{"summarize with null id", func(p *Params) {
			p.Object = json.RawMessage(`{"object":"sale","id":null}`)
			p.Summarize = true
		}, ErrNoIdentity},
		{"over the cap without id", func(p *Params) {
			p.Object = json.RawMessage(`{"object":"sale","blob":"` + strings.Repeat("x", MaxBodyBytes) + `"}`)
		}, ErrNoIdentity},
		{"summary itself over the cap", func(p *Params) {
			p.Object = json.RawMessage(`{"object":"sale","id":"` + strings.Repeat("x", MaxBodyBytes) + `"}`)
		}, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := baseParams()
			tt.params(&p)
			ev, body, err := Build(p)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Build err = %v, want %v", err, tt.want)
			}
			if body != nil || !reflect.DeepEqual(ev, Event{}) {
				t.Fatalf("Build returned a result with an error: %+v %s", ev, body)
			}
		})
	}
}

// paddedParams returns params whose body is exactly MaxBodyBytes+extra bytes
// when built whole: it measures the body with an empty padding field and then
// fills the padding with one-byte characters.
func paddedParams(t *testing.T, typ string, extra int) Params {
	t.Helper()
	withPad := func(n int) Params {
		p := baseParams()
		p.Type = typ
		p.ChangedFields = []string{"total_cents", "notes"}
		p.Object = json.RawMessage(`{"object":"sale","id":"sale_1","total_cents":1500,"notes":"` +
			strings.Repeat("x", n) + `"}`)
		return p
	}
	_, body, err := Build(withPad(0))
	if err != nil {
		t.Fatal(err)
	}
	p := withPad(MaxBodyBytes - len(body) + extra)
	return p
}

// assertRoundTrip checks that the body decodes back to the returned Event,
// i.e. consumers of the JetStream message see what was built.
func assertRoundTrip(t *testing.T, ev Event, body []byte) {
	t.Helper()
	if !json.Valid(body) {
		t.Fatalf("body is not valid JSON: %s", body)
	}
	var got Event
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("decode body: %v", err)
	}
	if !reflect.DeepEqual(got, ev) {
		t.Fatalf("decoded body differs from Event:\n got %+v\nwant %+v", got, ev)
	}
}
