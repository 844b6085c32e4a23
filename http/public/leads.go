package public

import (
	"context"
	"net/http"

	"github.com/go-fuego/fuego"
	"github.com/uptrace/bun"

	"oficina/http/wire"
	"oficina/schema/leads"
	"oficina/streams"
)

// LeadRequest documents the body of POST /leads in the OpenAPI document.
// The handler decodes leads.Request, whose task member tells omitted from
// null (which the schema generator cannot see); TestLeadRequestDocMatches
// keeps the two in step.
type LeadRequest struct {
	Name   string          `json:"name" validate:"required" description:"Name of the contact (up to 200 characters)"`
	Email  *string         `json:"email" description:"E-mail; email or phone is required. Matched case-insensitively for de-duplication"`
	Phone  *string         `json:"phone" description:"Phone; email or phone is required. Matched on its digits with country code (+55 assumed for 10 or 11 digits)"`
	Source *string         `json:"source" description:"Origin of the lead (up to 200 characters)"`
	Notes  *string         `json:"notes" description:"Goes to the record's notes (new records) and, without a task description, describes the task"`
	Task   *leads.LeadTask `json:"task" description:"Omitted: default task due in 24 hours; null: no task; object: the task"`
}

func (s *Server) leadRoutes() {
	handle(s, http.MethodPost, "/leads", access{perm: leads.PermCreate, skipMember: true}, s.captureLead,
		tag("leads"), summary("Capture a lead: a client record and a follow-up task"),
		fuego.OptionDefaultStatusCode(http.StatusCreated))
}

// captureLead is POST /leads (spec 4.5). The route checked leads:create on
// the key; the remaining layers depend on the body (task or not), so they
// run after decoding and before anything is written.
func (s *Server) captureLead(c fuego.ContextWithBody[LeadRequest]) (leads.LeadCapture, error) {
	p := principal(c.Context())
	var req leads.LeadCaptureCreate
	if err := wire.Decode(c.Request(), &req); err != nil {
		return leads.LeadCapture{}, err
	}
	if err := leads.Authorize(p, req.OpensTask()); err != nil {
		return leads.LeadCapture{}, err
	}
	plan, err := leads.Validate(req, p.CompanyID())
	if err != nil {
		return leads.LeadCapture{}, err
	}
	var out *leads.LeadCapture
	err = s.write(c.Context(), p, func(ctx context.Context, tx bun.Tx, w streams.Write) error {
		var err error
		out, err = leads.Run(ctx, tx, w, plan)
		return err
	})
	if err != nil {
		return leads.LeadCapture{}, err
	}
	if !leads.SeesRecord(p) {
		return out.Summarized(), nil
	}
	return *out, nil
}
