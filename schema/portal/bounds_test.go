package portal_test

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"oficina/schema/portal"
)

// Issue 26 item 6: the portal session's lifetime bounds in the OpenAPI
// document (min/max tags) are MinTTL and MaxTTL, which Mint checks.
func TestDocumentedTTLBoundsAreMints(t *testing.T) {
	f, _ := reflect.TypeFor[portal.PortalSessionCreate]().FieldByName("TTLSeconds")
	if f.Tag.Get("min") != strconv.Itoa(int(portal.MinTTL/time.Second)) || f.Tag.Get("max") != strconv.Itoa(int(portal.MaxTTL/time.Second)) {
		t.Errorf("ttl_seconds: min %q max %q, want %v and %v", f.Tag.Get("min"), f.Tag.Get("max"), portal.MinTTL, portal.MaxTTL)
	}
}

// Issue 26 item 6: read_only does not stand beside manage_endpoints or
// recover, in the document (without) as in normalize.
func TestDocumentedCapabilitiesRuleIsNormalizes(t *testing.T) {
	f, _ := reflect.TypeFor[portal.PortalSessionCreate]().FieldByName("Capabilities")
	want := string(portal.ReadOnly) + ":" + string(portal.ManageEndpoints) + "," + string(portal.Recover)
	if got := f.Tag.Get("without"); got != want {
		t.Errorf("capabilities: without %q, want %q", got, want)
	}
}
