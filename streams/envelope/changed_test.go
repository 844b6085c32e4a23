package envelope

import (
	"encoding/json"
	"slices"
	"testing"
)

// Spec 6.3 rules 1 and 3, and the comparison choices documented on ChangedFields.
func TestChangedFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		before, after string
		want          []string
	}{
		{
			name:   "rule 1: alphabetical order",
			before: `{"object":"sale","id":"s1","status":"open","discount_cents":0,"notes":"a"}`,
			after:  `{"object":"sale","id":"s1","status":"paid","discount_cents":100,"notes":"b"}`,
			want:   []string{"discount_cents", "notes", "status"},
		},
		{
			name:   "rule 1: updated_at never appears",
			before: `{"object":"client","id":"c1","name":"A","updated_at":"2024-01-01T00:00:00Z"}`,
			after:  `{"object":"client","id":"c1","name":"B","updated_at":"2024-01-02T00:00:00Z"}`,
			want:   []string{"name"},
		},
		{
			name:   "rule 3: only updated_at changed is no change",
			before: `{"object":"client","id":"c1","updated_at":"2024-01-01T00:00:00Z"}`,
			after:  `{"object":"client","id":"c1","updated_at":"2024-01-02T00:00:00Z"}`,
			want:   []string{},
		},
		{
			name:   "rule 3: identical objects give an empty list",
			before: `{"object":"client","id":"c1","name":"A"}`,
			after:  `{"object":"client","id":"c1","name":"A"}`,
			want:   []string{},
		},
		{
			name:   "rule 2: status and description both listed",
			before: `{"object":"service_order","id":"o1","status":"pending","description":"x"}`,
			after:  `{"object":"service_order","id":"o1","status":"scheduled","description":"y"}`,
			want:   []string{"description", "status"},
		},
		{
			name:   "nested change reports the top-level field",
			before: `{"id":"o1","address":{"city":"Recife","zip":"50000"},"items":[{"qty":1},{"qty":2}]}`,
			after:  `{"id":"o1","address":{"city":"Olinda","zip":"50000"},"items":[{"qty":1},{"qty":3}]}`,
			want:   []string{"address", "items"},
		},
		{
			name:   "nested key order is not a change",
			before: `{"id":"o1","address":{"city":"Recife","zip":"50000"}}`,
			after:  `{"id":"o1","address":{"zip":"50000","city":"Recife"}}`,
			want:   []string{},
		},
		{
			name:   "top-level key order and whitespace are not a change",
			before: `{"id":"o1","a":1,"b":[1, 2]}`,
			after:  "{\n  \"b\": [1,2],\n  \"a\": 1,\n  \"id\": \"o1\"\n}",
			want:   []string{},
		},
		{
			name:   "number spelling is not a change",
			before: `{"a":1,"b":1.5,"c":0,"d":100,"e":[1,2.50]}`,
			after:  `{"a":1.0,"b":15e-1,"c":-0.0,"d":1E+2,"e":[1e0,2.5]}`,
			want:   []string{},
		},
		{
			name:   "numbers beyond 2^53 compare exactly",
			before: `{"a":9007199254740992,"b":12345678901234567890}`,
			after:  `{"a":9007199254740993,"b":12345678901234567890.0}`,
			want:   []string{"a"},
		},
		{
			name:   "string escapes are not a change",
			before: `{"name":"Jos\u00e9 \/ A"}`,
			after:  `{"name":"José / A"}`,
			want:   []string{},
		},
		{
			name:   "array order is a change",
			before: `{"tags":["a","b"]}`,
			after:  `{"tags":["b","a"]}`,
			want:   []string{"tags"},
		},
		{
			name:   "type change is a change",
			before: `{"a":1,"b":"1","c":null,"d":false,"e":{},"f":[]}`,
			after:  `{"a":"1","b":1,"c":false,"d":null,"e":[],"f":{}}`,
			want:   []string{"a", "b", "c", "d", "e", "f"},
		},
		{
			name:   "added, removed, and absent versus null are changes",
			before: `{"id":"c1","old":1,"nullable":null}`,
			after:  `{"id":"c1","new":1}`,
			want:   []string{"new", "nullable", "old"},
		},
		{
			name:   "updated_at added or removed is still not listed",
			before: `{"id":"c1"}`,
			after:  `{"id":"c1","updated_at":"2024-01-02T00:00:00Z"}`,
			want:   []string{},
		},
		{
			name:   "empty objects",
			before: `{}`,
			after:  `{}`,
			want:   []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ChangedFields(json.RawMessage(tt.before), json.RawMessage(tt.after))
			if err != nil {
				t.Fatalf("ChangedFields: %v", err)
			}
			if got == nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ChangedFields = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestChangedFields_RejectsNonObjects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		before, after string
	}{
		{"before null", `null`, `{}`},
		{"after null", `{}`, `null`},
		{"array", `[]`, `{}`},
		{"string", `{}`, `"x"`},
		{"empty input", ``, `{}`},
		{"broken JSON", `{"a":`, `{}`},
		{"trailing data", `{}`, `{} {}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, err := ChangedFields(json.RawMessage(tt.before), json.RawMessage(tt.after)); err == nil {
				t.Fatalf("ChangedFields = %v, want error", got)
			}
		})
	}
}

func TestCanonicalNumber(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"-0", "0"},
		{"0.000", "0"},
		{"0e99", "0"},
		{"1", "1e0"},
		{"1.0", "1e0"},
		{"10", "1e1"},
		{"100e-2", "1e0"},
		{"-1.20", "-12e-1"},
		{"0.05", "5e-2"},
		{"1E+2", "1e2"},
		{"1e999999999999999999999", "1e999999999999999999999"},
	}
	for _, tt := range tests {
		if got := canonicalNumber(tt.in); got != tt.want {
			t.Errorf("canonicalNumber(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
