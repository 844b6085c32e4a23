package apierr

// Body is the JSON error envelope of part 7.
type Body struct {
	Error EnvelopeError `json:"error"`
}

// EnvelopeError is the inside of the envelope.
type EnvelopeError struct {
	Type      string         `json:"type"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	DocURL    string         `json:"doc_url"`
	RequestID string         `json:"request_id,omitempty"`
	Param     string         `json:"param,omitempty"`
	Errors    []EnvelopeItem `json:"errors,omitempty"`
}

// EnvelopeItem is one invalid field of a 422.
type EnvelopeItem struct {
	Param   string `json:"param"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Envelope renders e in lang; requestID is empty outside /public/v1.
func (c *Catalogue) Envelope(e *Error, lang, requestID string) (int, Body) {
	ent, ok := c.Lookup(e.Code)
	if !ok {
		ent, _ = c.Lookup(InternalError)
	}
	b := Body{Error: EnvelopeError{
		Type:      ent.Type,
		Code:      string(ent.Code),
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
