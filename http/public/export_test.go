package public

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-fuego/fuego"
	"github.com/uptrace/bun"

	"oficina/http/wire"
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
//     after writing), "swallowed" (the write fails after inserting and the
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
		status: http.StatusCreated}, tw.create(s))
	return tw
}

func (tw *TestWrites) create(s *Server) func(c fuego.ContextWithBody[TestWriteBody]) (TestWriteView, error) {
	return func(c fuego.ContextWithBody[TestWriteBody]) (TestWriteView, error) {
		ctx := c.Context()
		var b TestWriteBody
		if err := wire.Decode(c.Request(), &b); err != nil {
			return TestWriteView{}, err
		}
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
		var out TestWriteView
		err := s.write(ctx, principal(ctx), func(ctx context.Context, tx bun.Tx, w *streams.Write) error {
			in := clients.ClientCreate{Name: b.Name}
			if b.Email != "" {
				in.Email = &b.Email
			}
			cl, err := clients.Create(ctx, tx, w.CompanyID, in, w.At)
			if err != nil {
				return err
			}
			if _, err := streams.Record(ctx, tx, w, streams.Change{Type: "client.created", Object: cl.View()}); err != nil {
				return err
			}
			out = TestWriteView{Client: cl.View(), Secret: "whsec_shown_once"}
			if b.Fail == "swallowed" {
				return errors.New("test: write failed after inserting")
			}
			return nil
		})
		if err != nil && b.Fail != "swallowed" {
			return TestWriteView{}, err
		}
		switch b.Fail {
		case "after_write":
			return TestWriteView{}, apierr.New(apierr.Conflict)
		case "sql_error":
			err := s.tx(ctx, principal(ctx), func(ctx context.Context, tx bun.Tx) error {
				_, err := tx.ExecContext(ctx, "SELECT 1/0")
				return err
			})
			return TestWriteView{}, apierr.Wrap(apierr.Conflict, err)
		case "internal":
			return TestWriteView{}, errors.New("test: boom after writing")
		}
		omitOnReplay(ctx, "secret")
		c.SetHeader("Location", Prefix+"/clients/"+out.ID)
		return out, nil
	}
}
