package apierr

import (
	"maps"
	"slices"
)

// Body is the JSON error envelope of part 7.
type Body struct {
	Error EnvelopeError `json:"error"`
}

// SchemaName is the envelope's name in the OpenAPI document (Error is the
// Go error value here).
func (Body) SchemaName() string { return "Error" }

// EnvelopeError is the inside of the envelope.
type EnvelopeError struct {
	Type      ErrorType      `json:"type"`
	Code      Code           `json:"code"`
	Message   string         `json:"message" doc:"Human text in the Accept-Language language (pt-BR, en or es)."`
	DocURL    string         `json:"doc_url" doc:"Documentation of the code, at its anchor."`
	RequestID string         `json:"request_id,omitempty" doc:"The Request-Id of the answer; on /public/v1 only."`
	Param     string         `json:"param,omitempty" doc:"Reserved; no route emits it."`
	Errors    []EnvelopeItem `json:"errors,omitempty" doc:"On 422 validation_failed only: every invalid field."`
}

// SchemaName names the inside of the envelope in the OpenAPI document.
func (EnvelopeError) SchemaName() string { return "ErrorDetail" }

// EnvelopeItem is one invalid field of a 422.
type EnvelopeItem struct {
	Param   string    `json:"param" doc:"Path of the field in the body: items[0].unit_price_cents."`
	Code    FieldCode `json:"code"`
	Message string    `json:"message"`
}

// SchemaName names an invalid field in the OpenAPI document.
func (EnvelopeItem) SchemaName() string { return "FieldError" }

// ErrorType is an error's family (error.type).
type ErrorType string

// Values are the families of part 7.
func (ErrorType) Values() []string { return slices.Sorted(maps.Keys(familyStatuses)) }

// SchemaName names the code's enum in the OpenAPI document.
func (Code) SchemaName() string { return "ErrorCode" }

// Values are the catalogue's codes, reserved ones included (a published
// code keeps existing, spec 9).
func (Code) Values() []string {
	out := make([]string, len(Default.Codes))
	for i, e := range Default.SortedCodes() {
		out[i] = string(e.Code)
	}
	return out
}

// FieldCode is the code of one invalid field (errors[].code).
type FieldCode string

// Values are the catalogue's field codes.
func (FieldCode) Values() []string {
	out := make([]string, 0, len(Default.FieldCodes))
	for _, f := range Default.FieldCodes {
		out = append(out, string(f.Code))
	}
	slices.Sort(out)
	return out
}

// Envelope renders e in lang; requestID is empty outside /public/v1.
func (c *Catalogue) Envelope(e *Error, lang, requestID string) (int, Body) {
	ent, ok := c.Lookup(e.Code)
	if !ok {
		ent, _ = c.Lookup(InternalError)
	}
	b := Body{Error: EnvelopeError{
		Type:      ErrorType(ent.Type),
		Code:      ent.Code,
		Message:   pick(ent.Messages, lang),
		DocURL:    c.DocURL(ent.Code),
		RequestID: requestID,
	}}
	for _, f := range e.Fields {
		msg := ""
		if fe, ok := c.Field(f.Code); ok {
			msg = pick(fe.Messages, lang)
		} else {
			msg = pick(ent.Messages, lang)
		}
		b.Error.Errors = append(b.Error.Errors, EnvelopeItem{Param: f.Param, Code: f.Code, Message: msg})
	}
	return ent.Status, b
}

func pick(m map[string]string, lang string) string {
	if s, ok := m[lang]; ok {
		return s
	}
	return m[Languages[0]]
}
