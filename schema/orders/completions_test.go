package orders

import (
	"testing"

	"oficina/schema/apitime"
)

// The technician completion orders of docs/api.md, without the database.
func TestTechnicianCompletionOrders(t *testing.T) {
	t.Parallel()
	lead, s1, s2 := "mem_lead", "mem_s1", "mem_s2"
	order := func(marks ...string) *Row {
		o := &Row{TechnicianID: &lead, SupportTechnicianIDs: []string{s1, s2}}
		for _, m := range marks {
			o.TechnicianCompletions = append(o.TechnicianCompletions, TechnicianCompletion{TechnicianID: m, CompletedAt: apitime.Time{}})
		}
		return o
	}
	for _, tc := range []struct {
		name  string
		mode  string
		marks []string
		want  bool
	}{
		{"none needs nothing", CompletionNone, nil, true},
		{"any: all marked in any order", CompletionAny, []string{lead, s2, s1}, true},
		{"any: one missing", CompletionAny, []string{lead, s1}, false},
		{"support_first: in charge last", CompletionSupportFirst, []string{s2, s1, lead}, true},
		{"support_first: in charge before a support", CompletionSupportFirst, []string{s1, lead, s2}, false},
		{"support_first: missing the in charge", CompletionSupportFirst, []string{s1, s2}, false},
	} {
		if got := order(tc.marks...).completionRespected(tc.mode); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
	solo := &Row{SupportTechnicianIDs: []string{s1}}
	if solo.completionRespected(CompletionSupportFirst) {
		t.Error("support without a mark passed")
	}
	if !(&Row{}).completionRespected(CompletionSupportFirst) {
		t.Error("an order without technicians needs no marks")
	}
}
