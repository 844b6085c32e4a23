package public

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"

	"oficina/http/wire"
	"oficina/streams"
	"oficina/tenant"
)

// Call is one request as its handler sees it: the caller, the decoded
// body, the path and query, and on a write route the write unit. The
// pipeline builds it after every check has passed and calls the route's
// handler once with it.
type Call[B any] struct {
	// P is the authenticated caller.
	P *tenant.Principal
	// Body is the request body decoded into B (wire.Decode); the zero B
	// on a route without one.
	Body B
	// W is the write unit on a write route (any method but GET): the
	// company transaction the handler's rules write and record their
	// events in, committed before the answer is sent. Nil on a read route,
	// whose handler opens its own transaction (Server.read).
	W   *streams.Write
	r   *http.Request
	ans *answer
}

// Path is the value of the route's path wildcard name.
func (c *Call[B]) Path(name string) string { return c.r.PathValue(name) }

// Query is the request's query.
func (c *Call[B]) Query() url.Values { return c.r.URL.Query() }

// Request is the request itself, for what a route needs beyond the path
// and query (the host a link it answers points back to).
func (c *Call[B]) Request() *http.Request { return c.r }

// SetHeader sets a header of the answer (kept with an idempotent answer).
func (c *Call[B]) SetHeader(name, value string) { c.ans.header.Set(name, value) }

// Stream makes the answer a stream: write, called once the handler has
// returned, sets the headers and writes the body itself (the events
// stream). Read routes only.
func (c *Call[B]) Stream(write func(w http.ResponseWriter) error) { c.ans.stream = write }

// OmitOnReplay names top-level fields of the answer that are not stored
// with the idempotency record, so a replay answers without them: a secret
// shown only once. The first answer still carries them.
func (c *Call[B]) OmitOnReplay(fields ...string) { c.ans.omit = append(c.ans.omit, fields...) }

// answer is what a handler answered: the success status, the body (nil:
// none) and what it asked of the answer.
type answer struct {
	status int
	body   any
	header http.Header
	omit   []string
	stream func(w http.ResponseWriter) error
}

// run is a route's handler behind the pipeline: it decodes the body and
// calls the handler with the caller and the unit (nil on a read route).
type run func(ctx context.Context, r *http.Request, p *tenant.Principal, w *streams.Write) (*answer, error)

// typed adapts a handler of body B and answer T to run: B as an interface
// type means no body, T as an interface type an answer without one when
// nil.
func typed[T, B any](status int, h func(ctx context.Context, c *Call[B]) (T, error)) run {
	decode := reflect.TypeFor[B]().Kind() != reflect.Interface
	return func(ctx context.Context, r *http.Request, p *tenant.Principal, w *streams.Write) (*answer, error) {
		ans := &answer{status: status, header: http.Header{}}
		c := &Call[B]{P: p, W: w, r: r, ans: ans}
		if decode {
			if err := wire.Decode(r, &c.Body); err != nil {
				return nil, err
			}
		}
		out, err := h(ctx, c)
		if err != nil {
			return nil, err
		}
		if v := reflect.ValueOf(&out).Elem(); v.Kind() != reflect.Interface || !v.IsNil() {
			ans.body = out
		}
		return ans, nil
	}
}

// writeTo sends the answer: its headers, status and JSON body.
func (a *answer) writeTo(w http.ResponseWriter) error {
	if a.stream != nil {
		return a.stream(w)
	}
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	if a.body == nil {
		w.WriteHeader(a.status)
		return nil
	}
	b, err := json.Marshal(a.body)
	if err != nil {
		return err
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_, err = w.Write(append(b, '\n'))
	return err
}

// as renders the row a rule returns with view, passing its error on:
// as((*orders.Row).View)(orders.Create(ctx, c.W, in)).
func as[R, V any](view func(R) V) func(R, error) (V, error) {
	return func(r R, err error) (V, error) {
		if err != nil {
			var zero V
			return zero, err
		}
		return view(r), nil
	}
}
