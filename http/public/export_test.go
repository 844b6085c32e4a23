package public

import (
	"context"
	"errors"
	"net/http"

	"oficina/schema/apierr"
	"oficina/schema/clients"
	"oficina/streams"
)

// TestWrites is a write route that only this package's tests register, so
// the pipeline's write rules (idempotency, bodies) are proven through real
// HTTP and PostgreSQL before, and independently of, the modules' routes.
//
// POST /test_writes (clients:create) creates a client record, records
// client.created and answers 201 with Location and a "secret" shown once.
// Body: name, email, and
//   - fail: "validation" (422 before writing), "after_write" (409 after
//     writing), "sql_error" (a failed statement, then 409), "internal" (500
//     after writing), "swallowed" (a statement fails after inserting and the
//     handler ignores it and answers 201);
//   - block: wait in the handler (after signalling Entered) until Release
//     is closed.
type TestWrites struct {
	Entered chan struct{}
	Release chan struct{}
}

// TestWriteBody is the body of POST /test_writes.
type TestWriteBody struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Fail  string `json:"fail"`
	Block bool   `json:"block"`
}

// TestWriteView is its answer.
type TestWriteView struct {
	clients.Client
	Secret string `json:"secret"`
}

// RegisterTestWrites adds the test route to s (before it serves requests).
func RegisterTestWrites(s *Server) *TestWrites {
	tw := &TestWrites{Entered: make(chan struct{}, 256), Release: make(chan struct{})}
	handle(s, http.MethodPost, "/test_writes", need("clients:create"), op{id: "createTestWrite", tag: "clients",
		status: http.StatusCreated}, tw.create)
	return tw
}

func (tw *TestWrites) create(ctx context.Context, c *Call[TestWriteBody]) (TestWriteView, error) {
	b := c.Body
	if b.Fail == "validation" {
		return TestWriteView{}, apierr.Invalid("name", "required")
	}
	if b.Block {
		tw.Entered <- struct{}{}
		select {
		case <-tw.Release:
		case <-ctx.Done():
			return TestWriteView{}, ctx.Err()
		}
	}
	in := clients.ClientCreate{Name: b.Name}
	if b.Email != "" {
		in.Email = &b.Email
	}
	cl, err := clients.Create(ctx, c.W.Tx, c.W.CompanyID, in, c.W.At)
	if err != nil {
		return TestWriteView{}, err
	}
	if _, err := streams.Record(ctx, c.W, streams.Change{Type: "client.created", Object: cl.View()}); err != nil {
		return TestWriteView{}, err
	}
	out := TestWriteView{Client: cl.View(), Secret: "whsec_shown_once"}
	switch b.Fail {
	case "swallowed":
		// A statement that fails, its error ignored: PostgreSQL has
		// aborted the transaction, so the unit cannot commit.
		_, _ = c.W.Tx.ExecContext(ctx, "SELECT 1/0")
	case "after_write":
		return TestWriteView{}, apierr.New(apierr.Conflict)
	case "sql_error":
		_, err := c.W.Tx.ExecContext(ctx, "SELECT 1/0")
		return TestWriteView{}, apierr.Wrap(apierr.Conflict, err)
	case "internal":
		return TestWriteView{}, errors.New("test: boom after writing")
	}
	c.OmitOnReplay("secret")
	c.SetHeader("Location", Prefix+"/clients/"+out.ID)
	return out, nil
}
