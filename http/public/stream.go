package public

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/http/openapi"
	"oficina/http/sse"
	"oficina/schema/apierr"
	"oficina/schema/events"
	"oficina/streams/jsconfig"
)

// The live event stream (issue 26 item 4): what `oficina listen` reads.
// Server-sent events from the EVENTS stream, in the order JetStream stored
// them; each message's id is its stream sequence, so a client that
// reconnects with Last-Event-ID resumes right after the last event it
// received, nothing skipped, for as long as EVENTS keeps it.

// streamHeartbeat is how often an idle stream sends a comment, so proxies
// and the client see the connection alive.
const streamHeartbeat = 15 * time.Second

func (s *Server) streamRoutes() {
	handle(s, http.MethodGet, "/events/stream", need("events:read"), op{id: "streamEvents", tag: "events",
		summary: "Stream events as they happen", stream: true,
		desc: "Server-sent events (`text/event-stream`): one message per event of the company, as the events happen, " +
			"in the order they were stored — `id` is the stream position, `event` the event type and `data` the envelope " +
			"exactly as webhooks carry it. Reconnect with `Last-Event-ID` (the last `id` received) to resume right after it; " +
			"without it the stream starts with the next event. A comment line every 15 s keeps the connection alive. " +
			"`oficina listen` reads this route. A key sees the events of the modules it may read (`<module>:read` and its " +
			"member's access), as in `GET /events`.",
		query: []openapi.Param{typeFilter("Only events of these types: names or family wildcards such as " +
			"`sale.*`; repeat the parameter for several (up to 20).")}},
		s.streamEvents)
}

func (s *Server) streamEvents(ctx context.Context, c *Call[any]) (any, error) {
	// Strictly: a query Go's parser gives up on (a broken escape, too many
	// members) would read as none and open a stream the client did not
	// ask for.
	q, err := url.ParseQuery(c.Request().URL.RawQuery)
	if err != nil {
		return nil, apierr.New(apierr.InvalidRequest)
	}
	for k := range q {
		if k != "type" {
			return nil, apierr.New(apierr.InvalidRequest)
		}
	}
	f, err := events.ParseFilter(q)
	if err != nil {
		return nil, err
	}
	visible := events.Visible(events.PrincipalReads(c.P))
	if f.Types != nil {
		visible = slices.DeleteFunc(visible, func(n string) bool { return !slices.Contains(f.Types, n) })
	}
	var after uint64
	if v := c.Request().Header.Get("Last-Event-ID"); v != "" {
		if after, err = strconv.ParseUint(v, 10, 64); err != nil {
			return nil, apierr.New(apierr.InvalidRequest)
		}
	}
	if s.deps.Events == nil {
		return nil, apierr.New(apierr.ServiceUnavailable)
	}
	filter, err := jsconfig.CompanyEventsFilter(c.P.CompanyID())
	if err != nil {
		return nil, err
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverNewPolicy}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	cons, err := s.deps.Events.OrderedConsumer(ctx, jsconfig.EventsStream, cfg)
	if err != nil {
		return nil, apierr.Wrap(apierr.ServiceUnavailable, err)
	}
	prefix := strings.TrimSuffix(filter, ">")
	c.Stream(func(w http.ResponseWriter) error {
		return s.sendStream(ctx, w, cons, prefix, visible)
	})
	return nil, nil
}

// sendStream writes cons's messages whose type is visible as server-sent
// events until the client leaves or the server closes.
func (s *Server) sendStream(ctx context.Context, w http.ResponseWriter, cons jetstream.Consumer, prefix string, visible []string) error {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	h := w.Header()
	h.Set("Content-Type", sse.ContentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: pass each message on at once
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return err
	}
	if err := rc.Flush(); err != nil {
		return err
	}
	msgs, err := cons.Messages()
	if err != nil {
		return err
	}
	defer msgs.Stop()
	type next struct {
		m   jetstream.Msg
		err error
	}
	got := make(chan next)
	go func() {
		for {
			m, err := msgs.Next()
			select {
			case got <- next{m, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	beat := time.NewTicker(streamHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
		case n := <-got:
			if errors.Is(n.err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			if n.err != nil {
				return n.err
			}
			typ := strings.TrimPrefix(n.m.Subject(), prefix)
			if !slices.Contains(visible, typ) {
				continue
			}
			md, err := n.m.Metadata()
			if err != nil {
				return err
			}
			if err := sse.Write(w, sse.Message{ID: strconv.FormatUint(md.Sequence.Stream, 10), Event: typ, Data: string(n.m.Data())}); err != nil {
				return nil // the client left
			}
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
	}
}
