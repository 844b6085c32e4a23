package openapi

import (
	"net/http"
	"reflect"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// ErrorCodes describes the error envelope: its Go type (whose code, type
// and errors[].code members are enums of the catalogue) and, per status,
// what the answer means.
type ErrorCodes struct {
	Envelope reflect.Type
	// Meaning per status, for the response descriptions.
	Meaning map[int]string
}

// The response headers, documented once in components.headers.
const (
	hRequestID = "Request-Id"
	hLimit     = "RateLimit-Limit"
	hRemaining = "RateLimit-Remaining"
	hReset     = "RateLimit-Reset"
	hRetry     = "Retry-After"
	hAllow     = "Allow"
	hReplayed  = "Idempotent-Replayed"
)

func headers() openapi3.Headers {
	str := func() *openapi3.SchemaRef { return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string")}) }
	num := func() *openapi3.SchemaRef {
		return openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("integer"), Format: "int32", Min: new(0.0)})
	}
	h := func(desc string, required bool, schema *openapi3.SchemaRef) *openapi3.HeaderRef {
		return &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
			Description: desc, Required: required, Schema: schema,
		}}}
	}
	return openapi3.Headers{
		hRequestID: h("Id of this request (`req_` + 24 hex characters); the same value as `error.request_id`. "+
			"Quote it when asking for support.", true, str()),
		hLimit: h("The company's requests per minute (part 8). Absent when the company has no ceiling.", false, num()),
		hRemaining: h("Requests left in the sliding 60-second window. Absent when the company has no ceiling.",
			false, num()),
		hReset: h("Seconds until the next request slot opens. Absent when the company has no ceiling.", false, num()),
		hRetry: h("Seconds to wait before retrying.", true, num()),
		hAllow: h("The methods this path answers.", true, str()),
		hReplayed: h("`true` when the answer is the stored answer of an earlier request with the same "+
			"`Idempotency-Key`.", false, openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), Enum: []any{"true"}})),
	}
}

func headerRef(name string) *openapi3.HeaderRef {
	return &openapi3.HeaderRef{Ref: "#/components/headers/" + name}
}

// successHeaders are on every successful answer.
func successHeaders() openapi3.Headers {
	return openapi3.Headers{
		hRequestID: headerRef(hRequestID), hLimit: headerRef(hLimit), hRemaining: headerRef(hRemaining),
		hReset: headerRef(hReset), hReplayed: headerRef(hReplayed),
	}
}

// errorResponseName names the shared response of an error status.
func errorResponseName(status int) string {
	switch status {
	case http.StatusRequestEntityTooLarge:
		return "RequestTooLarge"
	case http.StatusUnprocessableEntity:
		return "ValidationFailed"
	}
	return stripSpaces(http.StatusText(status))
}

func stripSpaces(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ' ' && c != '-' && c != '\'' {
			out = append(out, c)
		}
	}
	return string(out)
}

// errorResponses are the shared error answers, one per status, each with
// the envelope and its headers.
func errorResponses(s *schemas, e ErrorCodes) openapi3.ResponseBodies {
	out := openapi3.ResponseBodies{}
	env := s.ref(e.Envelope, Response)
	for _, st := range []int{400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503} {
		h := openapi3.Headers{hRequestID: headerRef(hRequestID)}
		if st != http.StatusUnauthorized && st != http.StatusTooManyRequests {
			// Answers after the rate limit counted the request.
			h[hLimit], h[hRemaining], h[hReset] = headerRef(hLimit), headerRef(hRemaining), headerRef(hReset)
		}
		switch st {
		case http.StatusTooManyRequests:
			h[hRetry] = headerRef(hRetry)
			h[hLimit], h[hRemaining], h[hReset] = headerRef(hLimit), headerRef(hRemaining), headerRef(hReset)
		case http.StatusServiceUnavailable:
			h[hRetry] = headerRef(hRetry)
		case http.StatusMethodNotAllowed:
			h[hAllow] = headerRef(hAllow)
		}
		desc := e.Meaning[st]
		if desc == "" {
			desc = http.StatusText(st)
		}
		out[errorResponseName(st)] = &openapi3.ResponseRef{Value: &openapi3.Response{
			Description: new(strconv.Itoa(st) + ": " + desc),
			Headers:     h,
			Content:     openapi3.Content{"application/json": &openapi3.MediaType{Schema: env}},
		}}
	}
	return out
}

func idempotencyKey() *openapi3.Parameter {
	return &openapi3.Parameter{
		Name: "Idempotency-Key", In: "header",
		Description: "Makes the write safe to retry: the same key with the same request replays the stored answer " +
			"for 24 hours (`Idempotent-Replayed: true`) and writes nothing again; with another request, or under " +
			"another API key than the one that made the answer (or its rotation), it is 422 `idempotency_key_reused`; " +
			"while the first request runs, 409 `idempotency_in_progress`. A UUID is a good key.",
		Schema: openapi3.NewSchemaRef("", &openapi3.Schema{Type: types("string"), MinLength: 1, MaxLength: new(uint64(255)),
			Pattern: "^[ -~]+$"}),
	}
}
