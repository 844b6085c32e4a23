package streams

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"oficina/streams/jsconfig"
)

// TailOptions choose what Tail follows.
type TailOptions struct {
	// CompanyID is the company whose events are followed (required).
	CompanyID string
	// Type filters by event type with NATS wildcards: "sale.*",
	// "sale.paid", "*.updated"; "" or "*" is every event.
	Type string
	// Since replays events stored during this period before following new
	// ones; zero follows only new events.
	Since time.Duration
	// Now is the clock for Since; nil is time.Now.
	Now func() time.Time
}

// TailFilter is the EVENTS subject filter for o.
func TailFilter(o TailOptions) (string, error) {
	if err := jsconfig.ValidToken(o.CompanyID); err != nil {
		return "", fmt.Errorf("streams: tail: company: %w", err)
	}
	t := o.Type
	if t == "" || t == SubscribeAll {
		t = ">"
	}
	toks := strings.Split(t, ".")
	for i, tok := range toks {
		if tok == "*" || tok == ">" && i == len(toks)-1 || validTypeToken(tok) {
			continue
		}
		return "", fmt.Errorf("streams: tail: invalid type filter %q", o.Type)
	}
	return "oficina.events." + o.CompanyID + "." + t, nil
}

func validTypeToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Tail follows a company's events on EVENTS with an ordered (ephemeral)
// consumer and calls fn with each envelope as it arrives, until ctx ends
// (then it returns nil) or fn fails.
func Tail(ctx context.Context, js jetstream.JetStream, o TailOptions, fn func(subject string, body []byte) error) error {
	filter, err := TailFilter(o)
	if err != nil {
		return err
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverNewPolicy}
	if o.Since > 0 {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		start := now().Add(-o.Since)
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &start
	}
	cons, err := js.OrderedConsumer(ctx, jsconfig.EventsStream, cfg)
	if err != nil {
		return fmt.Errorf("streams: tail: %w", err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("streams: tail: %w", err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return fmt.Errorf("streams: tail: %w", err)
		}
		if err := fn(msg.Subject(), msg.Data()); err != nil {
			return err
		}
	}
}
