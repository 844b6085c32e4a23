package testkit

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Tags checks the rule tags the OpenAPI document is built from (issue 26
// item 6: min, max, minLength, maxLength, pattern, …) against the
// validators' constants: every member of types whose JSON name is in want
// carries each tag of want[name] with that value ("" for absent), and each
// name of want is met at least once.
func Tags(t testing.TB, want map[string]map[string]string, types ...reflect.Type) {
	t.Helper()
	seen := map[string]bool{}
	for _, typ := range types {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			tags, ok := want[name]
			if !ok {
				continue
			}
			seen[name] = true
			for _, key := range slices.Sorted(maps.Keys(tags)) {
				if got := f.Tag.Get(key); got != tags[key] {
					t.Errorf("%s.%s: %s %q, want %q", typ.Name(), f.Name, key, got, tags[key])
				}
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no member %s in %v", name, types)
		}
	}
}
