package public

import (
	"context"
	"net/http"

	"oficina/schema/leads"
)

func (s *Server) leadRoutes() {
	handle(s, http.MethodPost, "/leads", access{perm: leads.PermCreate, skipMember: true}, op{id: "captureLead", tag: "leads",
		summary: "Capture a lead", status: http.StatusCreated,
		desc: "Registers the contact as a client record (status `lead`) and opens a follow-up task. When the e-mail or " +
			"phone already belongs to a record of the company, that record is reused unchanged and `deduplicated` is " +
			"true. Opening a task (the default, or an object) also needs `tasks:create`; `task: null` opens none. A key " +
			"with neither `leads:read` nor `clients:read` gets `lead` and `task` with only `object` and `id`.",
		example: `{"name": "Maria Souza", "phone": "+55 11 91234-5678", "source": "site"}`}, s.captureLead)
}

// captureLead is POST /leads (spec 4.5). The route checked leads:create on
// the key; the remaining layers depend on the body (task or not), so they
// run after decoding and before anything is written.
func (s *Server) captureLead(ctx context.Context, c *Call[leads.LeadCaptureCreate]) (leads.LeadCapture, error) {
	p := c.P
	req := c.Body
	if err := leads.Authorize(p, req.OpensTask()); err != nil {
		return leads.LeadCapture{}, err
	}
	plan, err := leads.Validate(req, p.CompanyID())
	if err != nil {
		return leads.LeadCapture{}, err
	}
	out, err := leads.Run(ctx, c.W, plan)
	if err != nil {
		return leads.LeadCapture{}, err
	}
	if !leads.SeesRecord(p) {
		return out.Summarized(), nil
	}
	return *out, nil
}
