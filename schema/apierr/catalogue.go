// Package apierr is the one catalogue of API error codes: each code's HTTP
// status, family (type) and messages in pt-BR, en and es. Every error the
// public API returns is built from it, the constants in codes_gen.go and the
// error documentation page are generated from catalogue.json, so a code can
// never drift between the server, the docs and the tests.
package apierr

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
)

//go:generate go run ./internal/gen

//go:embed catalogue.json
var catalogueJSON []byte

// Entry is one code of the catalogue.
type Entry struct {
	Code     Code              `json:"code"`
	Status   int               `json:"status"`
	Type     string            `json:"type"`
	Reserved bool              `json:"reserved,omitempty"`
	Messages map[string]string `json:"messages"`
	See      *See              `json:"see,omitempty"`
}

// FieldEntry is one code used inside errors[] of a validation error.
type FieldEntry struct {
	Code     FieldCode         `json:"code"`
	Messages map[string]string `json:"messages"`
	See      *See              `json:"see,omitempty"`
}

// See is where the documentation of a code goes on: the error page
// (docs/errors.md, what doc_url points at) links it beside the code, so
// a client following doc_url finds what to do.
type See struct {
	Title string `json:"title"`
	Href  string `json:"href"` // relative to docs/ ("api.md#…"), or an anchor of the page ("#…")
}

// Catalogue is the parsed catalogue.json.
type Catalogue struct {
	DocBaseURL string       `json:"doc_base_url"`
	Codes      []Entry      `json:"codes"`
	FieldCodes []FieldEntry `json:"field_codes"`

	byCode  map[Code]*Entry
	byField map[FieldCode]*FieldEntry
}

// Parse reads a catalogue and checks it: every code has one status, a known
// type allowed for that status, and a message in each supported language.
func Parse(data []byte) (*Catalogue, error) {
	var c Catalogue
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("apierr: parse catalogue: %w", err)
	}
	c.byCode = make(map[Code]*Entry, len(c.Codes))
	for i := range c.Codes {
		e := &c.Codes[i]
		if _, dup := c.byCode[e.Code]; dup {
			return nil, fmt.Errorf("apierr: code %q listed twice", e.Code)
		}
		if !typeAllows(e.Type, e.Status) {
			return nil, fmt.Errorf("apierr: code %q: type %q does not carry status %d", e.Code, e.Type, e.Status)
		}
		if err := checkMessages(string(e.Code), e.Messages); err != nil {
			return nil, err
		}
		if err := e.See.check(string(e.Code)); err != nil {
			return nil, err
		}
		c.byCode[e.Code] = e
	}
	c.byField = make(map[FieldCode]*FieldEntry, len(c.FieldCodes))
	goNames := make(map[string]string, len(c.Codes)+len(c.FieldCodes))
	for _, e := range c.Codes {
		goNames[goName(string(e.Code))] = string(e.Code)
	}
	for i := range c.FieldCodes {
		f := &c.FieldCodes[i]
		if _, dup := c.byField[f.Code]; dup {
			return nil, fmt.Errorf("apierr: field code %q listed twice", f.Code)
		}
		// Both kinds of code are constants of this package.
		if other, clash := goNames[goName(string(f.Code))]; clash {
			return nil, fmt.Errorf("apierr: field code %q and code %q would share the constant %s", f.Code, other, goName(string(f.Code)))
		}
		if err := checkMessages(string(f.Code), f.Messages); err != nil {
			return nil, err
		}
		if err := f.See.check(string(f.Code)); err != nil {
			return nil, err
		}
		c.byField[f.Code] = f
	}
	return &c, nil
}

// familyStatuses is part 7's table of families; method_not_allowed (405) is
// our documented addition to invalid_request_error.
var familyStatuses = map[string][]int{
	"invalid_request_error": {400, 404, 405, 413, 415},
	"authentication_error":  {401},
	"permission_error":      {403},
	"conflict_error":        {409},
	"validation_error":      {422},
	"rate_limit_error":      {429},
	"api_error":             {500, 503},
}

func typeAllows(typ string, status int) bool {
	for _, s := range familyStatuses[typ] {
		if s == status {
			return true
		}
	}
	return false
}

func checkMessages(code string, m map[string]string) error {
	for _, l := range Languages {
		if m[l] == "" {
			return fmt.Errorf("apierr: code %q has no %s message", code, l)
		}
	}
	return nil
}

// check accepts no link, or one with a title and an address.
func (s *See) check(code string) error {
	if s != nil && (s.Title == "" || s.Href == "") {
		return fmt.Errorf("apierr: code %q: see needs a title and an href", code)
	}
	return nil
}

// Lookup returns the entry of a code.
func (c *Catalogue) Lookup(code Code) (*Entry, bool) {
	e, ok := c.byCode[code]
	return e, ok
}

// Field returns the entry of a field code.
func (c *Catalogue) Field(code FieldCode) (*FieldEntry, bool) {
	f, ok := c.byField[code]
	return f, ok
}

// DocURL is the documentation address at the anchor of the code.
func (c *Catalogue) DocURL(code Code) string { return c.DocBaseURL + "#" + string(code) }

// SortedCodes returns the codes in alphabetical order.
func (c *Catalogue) SortedCodes() []Entry {
	out := append([]Entry(nil), c.Codes...)
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// Default is the catalogue compiled into the binary. It is parsed once; the
// embedded file is checked by TestCatalogueIsValid, so a broken file fails
// the build's tests rather than a request.
var Default = mustDefault()

func mustDefault() *Catalogue {
	c, err := Parse(catalogueJSON)
	if err != nil {
		// Only reachable when catalogue.json is broken, which the tests catch.
		return &Catalogue{byCode: map[Code]*Entry{}, byField: map[FieldCode]*FieldEntry{}}
	}
	return c
}
