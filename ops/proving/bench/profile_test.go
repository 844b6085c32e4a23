package bench

import (
	"strings"
	"testing"
)

func TestFunctionProfileListsTheRunsCallsHeaviestFirst(t *testing.T) {
	before := map[string]fnStat{"oficina_a": {Name: "oficina_a", Calls: 10, Total: 10, Self: 5}}
	after := map[string]fnStat{
		"oficina_a":    {Name: "oficina_a", Calls: 30, Total: 50, Self: 25},  // 20 calls, self 20 ms
		"oficina_b":    {Name: "oficina_b", Calls: 10, Total: 100, Self: 80}, // new: self 80 ms
		"oficina_idle": {Name: "oficina_idle", Calls: 0, Total: 0, Self: 0},  // not called
	}
	out := renderFunctions(before, after, 2)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], "oficina_b ") || !strings.HasPrefix(lines[3], "oficina_a ") {
		t.Fatalf("want b then a, idle left out:\n%s", out)
	}
	// a: 10 calls/s, self 10 ms/s, total 20 ms/s, 2 ms a call.
	if f := strings.Fields(lines[3]); f[1] != "10.0" || f[2] != "10.0" || f[3] != "20.0" || f[4] != "2.000" {
		t.Errorf("oficina_a: %q", lines[3])
	}
}
