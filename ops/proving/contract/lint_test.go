package contract_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"oficina/ops/proving/contract"
)

// lintReport is what redocly lint --format json prints.
type lintReport struct {
	Totals struct {
		Errors   int `json:"errors"`
		Warnings int `json:"warnings"`
	} `json:"totals"`
	Version  string `json:"version"`
	Problems []struct {
		RuleID   string `json:"ruleId"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
		Location []struct {
			Pointer string `json:"pointer"`
		} `json:"location"`
	} `json:"problems"`
}

// An independent OpenAPI linter, Redocly CLI with the rules of
// redocly.yaml (recommended, warnings as errors, and three rules of the
// issue: JSON only — server-sent events on the event stream aside —,
// camelCase operationIds, PascalCase schema names),
// finds no error in the document.
func TestOpenAPIDocumentPassesAnIndependentLinter(t *testing.T) {
	t.Parallel()
	nodeTools(t)
	stdout, stderr, code := run(t, nil, bin("redocly"), "lint", "--config", "redocly.yaml",
		"--format", "json", "--max-problems", "100000", document)
	var rep lintReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("redocly lint (exit %d) printed no report: %v\nstdout: %.2000s\nstderr: %.2000s", code, err, stdout, stderr)
	}
	if rep.Totals.Errors == 0 && code != 0 {
		t.Fatalf("redocly lint exited %d with no error counted:\n%.2000s", code, stderr)
	}
	byRule := map[string]int{}
	var examples []string
	for _, p := range rep.Problems {
		if p.Severity != "error" {
			continue
		}
		byRule[p.RuleID]++
		if byRule[p.RuleID] == 1 {
			ptr := ""
			if len(p.Location) > 0 {
				ptr = p.Location[0].Pointer
			}
			examples = append(examples, fmt.Sprintf("%s at %s: %s", p.RuleID, ptr, p.Message))
		}
	}
	rules := make([]string, 0, len(byRule))
	for r := range byRule {
		rules = append(rules, r)
	}
	slices.SortFunc(rules, func(a, b string) int { return byRule[b] - byRule[a] })
	var sb strings.Builder
	fmt.Fprintf(&sb, "contract lint: Redocly CLI %s: %d errors, %d warnings in %s", rep.Version, rep.Totals.Errors, rep.Totals.Warnings, strings.TrimPrefix(document, "../../../"))
	sb.WriteString("\n")
	for _, r := range rules {
		fmt.Fprintf(&sb, "    %5d  %s\n", byRule[r], r)
	}
	for _, e := range examples {
		fmt.Fprintf(&sb, "  e.g. %s\n", e)
	}
	if err := contract.WriteReport("ops/proving/contract lint", sb.String()); err != nil {
		t.Log(err)
	}
	if rep.Totals.Errors > 0 {
		t.Error(sb.String())
	} else {
		t.Log(sb.String())
	}
}
