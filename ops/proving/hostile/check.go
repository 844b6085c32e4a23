package hostile

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// catalogue is the spec's error table (part 7) plus the documented
// addition method_not_allowed (docs/api.md): code → status and type. It is
// the run's own copy, so the server is judged against the contract and not
// against itself.
var catalogue = map[string]struct {
	status int
	typ    string
}{
	"api_key_invalid":          {401, "authentication_error"},
	"access_denied":            {403, "permission_error"},
	"permission_missing":       {403, "permission_error"},
	"member_permission_denied": {403, "permission_error"},
	"member_suspended":         {403, "permission_error"},
	"organization_suspended":   {403, "permission_error"},
	"subscription_inactive":    {403, "permission_error"},
	"plan_feature_unavailable": {403, "permission_error"},
	"plan_limit_reached":       {403, "permission_error"},
	"resource_not_found":       {404, "invalid_request_error"},
	"route_not_found":          {404, "invalid_request_error"},
	"method_not_allowed":       {405, "invalid_request_error"},
	"invalid_request":          {400, "invalid_request_error"},
	"validation_failed":        {422, "validation_error"},
	"conflict":                 {409, "conflict_error"},
	"idempotency_key_reused":   {422, "validation_error"},
	"idempotency_in_progress":  {409, "conflict_error"},
	"unsupported_media_type":   {415, "invalid_request_error"},
	"request_too_large":        {413, "invalid_request_error"},
	"rate_limit_exceeded":      {429, "rate_limit_error"},
	"request_failed":           {400, "invalid_request_error"},
	"internal_error":           {500, "api_error"},
	"service_unavailable":      {503, "api_error"},
}

var requestIDShape = regexp.MustCompile(`^req_[0-9a-f]{24}$`)

// expect is what a case must get back, beyond the bar that applies to
// every case (no 5xx, errors in the envelope).
type expect struct {
	Status int      // exact status; 0: any below 500
	Code   string   // exact error.code; "" any
	Param  string   // a 422 must name this field in errors[] ("" none)
	Refuse bool     // the input must be refused: a 2xx is a failure
	Not    int      // a status the answer must not have (the 1 MB body is not 413)
	Plain  bool     // net/http answers before Oficina: no envelope required
	Any    []int    // one of these statuses (with Plain answers)
	Codes  []string // one of these codes
	// ParamCode, with Param, is the code errors[] must give that field
	// (out_of_range for a huge numeral).
	ParamCode string
}

// judge returns what is wrong with an answer: bar problems break the
// run's bar (5xx, an error outside the envelope), the others only the
// case's expectation (another status or code than the contract says).
func judge(k *kase, a answer) (bar, other []string) {
	e := k.Expect
	public := strings.HasPrefix(k.Req.Path, Prefix+"/") || k.Req.Path == Prefix
	if a.Status >= 500 && !slices.Contains(e.Any, a.Status) {
		bar = append(bar, fmt.Sprintf("server error %d", a.Status))
	}
	if public && !e.Plain && !requestIDShape.MatchString(a.Header.Get("Request-Id")) {
		if a.Status >= 400 {
			bar = append(bar, "error without a Request-Id header")
		} else {
			other = append(other, "no Request-Id header")
		}
	}
	if a.Status >= 400 && !(e.Plain && a.JSON == nil) {
		bar = append(bar, envelopeProblems(a, public)...)
	}
	switch {
	case len(e.Any) > 0 && !slices.Contains(e.Any, a.Status):
		other = append(other, fmt.Sprintf("status %d, want one of %v", a.Status, e.Any))
	case e.Status != 0 && a.Status != e.Status:
		other = append(other, fmt.Sprintf("status %d, want %d", a.Status, e.Status))
	case e.Not != 0 && a.Status == e.Not:
		other = append(other, fmt.Sprintf("status %d", a.Status))
	case e.Refuse && a.Status < 400:
		other = append(other, fmt.Sprintf("accepted (%d), want a refusal", a.Status))
	}
	code := a.errorField("code")
	if e.Code != "" && a.Status >= 400 && code != e.Code {
		other = append(other, fmt.Sprintf("code %q, want %q", code, e.Code))
	}
	if len(e.Codes) > 0 && a.Status >= 400 && !slices.Contains(e.Codes, code) {
		other = append(other, fmt.Sprintf("code %q, want one of %v", code, e.Codes))
	}
	if e.Param != "" && a.Status == 422 && !namesParam(a, e.Param) {
		other = append(other, fmt.Sprintf("errors[] %s do not name %q", paramsOf(a), e.Param))
	}
	if e.ParamCode != "" && a.Status == 422 && fieldCode(a, e.Param) != e.ParamCode {
		other = append(other, fmt.Sprintf("errors[] give %q %q, want %q", e.Param, fieldCode(a, e.Param), e.ParamCode))
	}
	return bar, other
}

// envelopeProblems checks the error body of part 7.
func envelopeProblems(a answer, public bool) []string {
	var out []string
	if ct := a.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		out = append(out, fmt.Sprintf("error with Content-Type %q", ct))
	}
	if a.JSON == nil {
		return append(out, "error body is not JSON: "+snippet(a.Raw))
	}
	env, ok := a.JSON["error"].(map[string]any)
	if !ok || len(a.JSON) != 1 {
		return append(out, "no envelope: "+snippet(a.Raw))
	}
	str := func(k string) string { s, _ := env[k].(string); return s }
	code := str("code")
	want, known := catalogue[code]
	switch {
	case !known:
		out = append(out, fmt.Sprintf("code %q not in the catalogue", code))
	case want.status != a.Status:
		out = append(out, fmt.Sprintf("code %s with status %d, catalogue says %d", code, a.Status, want.status))
	case want.typ != str("type"):
		out = append(out, fmt.Sprintf("code %s with type %q, catalogue says %q", code, str("type"), want.typ))
	}
	if str("message") == "" {
		out = append(out, "envelope without message")
	}
	if !strings.HasSuffix(str("doc_url"), "#"+code) {
		out = append(out, fmt.Sprintf("doc_url %q does not point at #%s", str("doc_url"), code))
	}
	rid := a.Header.Get("Request-Id")
	switch {
	case public && str("request_id") != rid:
		out = append(out, fmt.Sprintf("request_id %q differs from the Request-Id header %q", str("request_id"), rid))
	case !public && env["request_id"] != nil:
		out = append(out, "request_id outside /public/v1")
	}
	if items, ok := env["errors"]; ok {
		list, _ := items.([]any)
		if code != "validation_failed" || len(list) == 0 {
			out = append(out, "errors[] on a "+code)
		}
		for _, it := range list {
			m, _ := it.(map[string]any)
			p, _ := m["param"].(string)
			c, _ := m["code"].(string)
			msg, _ := m["message"].(string)
			if p == "" || c == "" || msg == "" {
				out = append(out, fmt.Sprintf("errors[] item without param, code or message: %v", it))
			}
		}
	}
	switch a.Status {
	case 405:
		if a.Header.Get("Allow") == "" {
			out = append(out, "405 without Allow")
		}
	case 429:
		if a.Header.Get("Retry-After") == "" {
			out = append(out, "429 without Retry-After")
		}
	}
	return out
}

// namesParam reports whether errors[] names field: the field itself, a
// path inside it ("items[0].quantity") or its leaf. A field inside an array
// must be named with its index (docs/api.md), for a type error as for a
// broken rule: items.quantity does not name items[0].quantity.
func namesParam(a answer, field string) bool {
	if strings.Contains(field, "[") {
		for _, p := range paramsOf(a) {
			if p == field || strings.HasPrefix(p, field+".") || strings.HasPrefix(p, field+"[") {
				return true
			}
		}
		return false
	}
	leaf := field[strings.LastIndexAny(field, ".]")+1:]
	for _, p := range paramsOf(a) {
		norm := stripIndexes(p)
		if p == field || norm == stripIndexes(field) || strings.HasPrefix(norm, stripIndexes(field)+".") ||
			strings.HasSuffix(norm, "."+leaf) || norm == leaf {
			return true
		}
	}
	return false
}

var indexes = regexp.MustCompile(`\[\d+\]`)

func stripIndexes(s string) string { return indexes.ReplaceAllString(s, "") }

func paramsOf(a answer) []string {
	env, _ := a.JSON["error"].(map[string]any)
	list, _ := env["errors"].([]any)
	var out []string
	for _, it := range list {
		m, _ := it.(map[string]any)
		p, _ := m["param"].(string)
		out = append(out, p)
	}
	return out
}

// fieldCode is the code errors[] gives param ("" when it is not named).
func fieldCode(a answer, param string) string {
	env, _ := a.JSON["error"].(map[string]any)
	list, _ := env["errors"].([]any)
	for _, it := range list {
		m, _ := it.(map[string]any)
		if p, _ := m["param"].(string); p == param {
			c, _ := m["code"].(string)
			return c
		}
	}
	return ""
}
