package events_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"oficina/schema/eventnames"
	"oficina/schema/events"
	"oficina/streams"
	"oficina/tenant"
)

// Spec 6.2 and 6.4: every catalogued type is well formed — a unique
// lower-case name in a known family whose module has a read permission, a
// summary for integrators, and an Object whose JSON is an object with
// "object" and "id" like every GET representation, filled as the OpenAPI
// webhook example. Ping stands apart.
func TestEventTableIsWellFormed(t *testing.T) {
	t.Parallel()
	name := regexp.MustCompile(`^[a-z_]+\.[a-z_]+$`)
	families := map[string]bool{}
	for _, f := range events.Families() {
		if !slices.Contains(tenant.Modules[f.Module], tenant.Read) {
			t.Errorf("family %s: module %q has no read permission", f.Name, f.Module)
		}
		families[f.Name] = false
	}
	cat := events.Catalogue()
	if !slices.IsSortedFunc(cat, func(a, b streams.EventType) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("Catalogue is not sorted by name")
	}
	seen := map[string]bool{}
	for _, et := range append(cat, events.Ping) {
		if seen[et.Name] {
			t.Errorf("%s is declared twice", et.Name)
		}
		seen[et.Name] = true
		if et.Name != events.Ping.Name {
			if !name.MatchString(et.Name) {
				t.Errorf("%q is not family.action", et.Name)
			}
			if _, ok := families[et.Family()]; !ok {
				t.Errorf("%s: family %s has no permission module", et.Name, et.Family())
			}
			families[et.Family()] = true
		}
		if et.Kind == "" || et.Object == nil || !strings.HasSuffix(et.Summary, ".") {
			t.Errorf("%s: kind %q, object %T, summary %q", et.Name, et.Kind, et.Object, et.Summary)
		}
		keys := jsonKeys(t, et.Object)
		if !slices.Contains(keys, "object") || (et.Name != events.Ping.Name && !slices.Contains(keys, "id")) {
			t.Errorf("%s: %T renders %v, want object and id", et.Name, et.Object, keys)
		}
		// Object is the example of the OpenAPI document: of its kind, and
		// an update's example names changed fields the object has.
		var obj struct {
			Object, ID string
		}
		b, _ := json.Marshal(et.Object)
		if err := json.Unmarshal(b, &obj); err != nil || obj.Object != et.Kind || (et.Name != events.Ping.Name && obj.ID == "") {
			t.Errorf("%s: example %s is not a %s with an id", et.Name, b, et.Kind)
		}
		updated := strings.HasSuffix(et.Name, ".updated")
		if updated != (len(et.ChangedFields) > 0) || !slices.IsSorted(et.ChangedFields) ||
			slices.ContainsFunc(et.ChangedFields, func(f string) bool { return !slices.Contains(keys, f) || f == "updated_at" }) {
			t.Errorf("%s: example changed_fields %v (object members %v)", et.Name, et.ChangedFields, keys)
		}
	}
	for f, used := range families {
		if !used {
			t.Errorf("family %s has no event", f)
		}
	}
	if events.Subscribable(events.Ping.Name) || slices.ContainsFunc(cat, func(et streams.EventType) bool { return et.Name == "ping" }) {
		t.Error("ping is subscribable")
	}
}

// jsonKeys are the top-level keys v renders.
func jsonKeys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%T: %v", v, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%T renders %s, not an object", v, b)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Spec 4.6, 5.4 and 6.4: what may be subscribed to, and which module reads
// a subscription needs (all modules with events for "*").
func TestSubscriptionNamesAndModules(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"*": true, "sale.paid": true, "sale.*": true, "financial_transaction.*": true, "financial_transaction.updated": true,
		"stock.changed": true, "quote.status_changed": true, "sale.canceled": true, "ping": false, "sale.exploded": false,
		"invoice.*": false, "*.updated": false, "": false, "sale": false, "sale.": false,
	} {
		if events.Subscribable(name) != ok {
			t.Errorf("Subscribable(%q) = %v", name, !ok)
		}
	}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"sale.*"}, "[sales]"},
		{[]string{"sale.paid", "sale.created"}, "[sales]"},
		{[]string{"financial_transaction.*", "stock.changed"}, "[finance products]"},
		{[]string{"*"}, "[clients finance products quotes sales service_orders services tasks]"},
		{[]string{"sale.paid", "*"}, "[clients finance products quotes sales service_orders services tasks]"},
	} {
		if got := fmt.Sprint(events.SubscriptionModules(tc.names)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.names, got, tc.want)
		}
	}
	if m := events.ModuleOf("ping"); m != "" {
		t.Errorf("ping needs %q", m)
	}
	for _, n := range events.Names() {
		if events.ModuleOf(n) == "" {
			t.Errorf("%s has no module", n)
		}
		if et, ok := events.Lookup(n); !ok || et.Name != n {
			t.Errorf("Lookup(%s) = %v, %v", n, et, ok)
		}
	}
}

// docs/events.md lists every event type from the table: a change to the
// table without `go generate ./schema/events` fails here.
func TestEventsDocMatchesTheTable(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := events.ReplaceDoc(doc)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(doc) {
		t.Error("docs/events.md is stale: run go generate ./schema/events")
	}
	for _, n := range append(events.Names(), events.Ping.Name) {
		if !strings.Contains(string(doc), "| `"+n+"` |") {
			t.Errorf("docs/events.md has no row for %s", n)
		}
	}
}

// Decision 0037: schema/eventnames holds the table's names and families
// for schema/webhooks (which the table imports) and answers for every
// package; a module's new event, or a family changed, without
// `go generate ./schema/events` fails here.
func TestTheGeneratedNamesAreTheTables(t *testing.T) {
	t.Parallel()
	src, err := events.NamesSource()
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(events.NamesFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(src) != string(file) {
		t.Errorf("%s is stale: run go generate ./schema/events", events.NamesFile)
	}
	var table []string
	for _, et := range events.Catalogue() {
		table = append(table, et.Name)
	}
	if !slices.Equal(eventnames.Names(), table) || !slices.Equal(eventnames.Families(), events.Families()) {
		t.Errorf("eventnames answers %v and %v; the table holds %v and %v",
			eventnames.Names(), eventnames.Families(), table, events.Families())
	}
}
