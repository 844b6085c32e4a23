package jsconfig

import (
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestEventsWildcardConsumption(t *testing.T) {
	t.Parallel()
	ctx, js := ensured(t, DefaultConfig())

	pub := []struct{ company, typ string }{
		{"co_1", "sale.paid"},
		{"co_1", "order.created"},
		{"co_2", "sale.paid"},
		{"co_2", "lead.captured"},
		{"co_10", "sale.paid"}, // co_1 must not match co_10
	}
	for _, p := range pub {
		subj, err := EventSubject(p.company, p.typ)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, subj, []byte(p.company+" "+p.typ)); err != nil {
			t.Fatalf("publish %s: %v", subj, err)
		}
	}

	company, _ := CompanyEventsFilter("co_1")
	typ, _ := EventTypeFilter("sale.paid")
	for filter, want := range map[string][]string{
		company: {"co_1 sale.paid", "co_1 order.created"},
		typ:     {"co_1 sale.paid", "co_2 sale.paid", "co_10 sale.paid"},
	} {
		cons, err := js.OrderedConsumer(ctx, EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for range want {
			m, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
			if err != nil {
				t.Fatalf("%s: after %v: %v", filter, got, err)
			}
			got = append(got, string(m.Data()))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", filter, got, want)
		}
		if info, err := cons.Info(ctx); err != nil || info.NumPending != 0 {
			t.Errorf("%s: more pending: %+v %v", filter, info, err)
		}
	}
}

// A re-published outbox row (same event id) is dropped by the stream.
func TestEventsDedupByMsgID(t *testing.T) {
	t.Parallel()
	ctx, js := ensured(t, DefaultConfig())

	subj, _ := EventSubject("co_1", "sale.paid")
	first, err := js.Publish(ctx, subj, []byte("a"), jetstream.WithMsgID("ev_1"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := js.Publish(ctx, subj, []byte("a"), jetstream.WithMsgID("ev_1"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Duplicate || !again.Duplicate || again.Sequence != first.Sequence {
		t.Errorf("first %+v, again %+v", first, again)
	}
	st, err := js.Stream(ctx, EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().State.Msgs; n != 1 {
		t.Errorf("stream holds %d messages, want 1", n)
	}
}
