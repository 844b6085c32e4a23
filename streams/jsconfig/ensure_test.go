package jsconfig

import (
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestEnsureCreatesBothStreams(t *testing.T) {
	t.Parallel()
	cfg := Config{Partitions: 8, DeliveriesMaxAge: 96 * time.Hour}
	ctx, js := ensured(t, cfg)

	ev, err := js.Stream(ctx, EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	ec := ev.CachedInfo().Config
	if len(ec.Subjects) != 1 || ec.Subjects[0] != "oficina.events.>" || ec.Retention != jetstream.LimitsPolicy ||
		ec.MaxAge != 30*24*time.Hour || ec.Duplicates != 2*time.Minute || ec.Replicas != 1 {
		t.Errorf("EVENTS config: %+v", ec)
	}

	dl, err := js.Stream(ctx, DeliveriesStream)
	if err != nil {
		t.Fatal(err)
	}
	dc := dl.CachedInfo().Config
	if !dc.AllowMsgSchedules || dc.Retention != jetstream.WorkQueuePolicy || dc.MaxAge != 96*time.Hour ||
		dc.SubjectTransform == nil ||
		dc.SubjectTransform.Destination != "oficina.dlv.{{partition(8,1)}}.{{wildcard(1)}}.{{wildcard(2)}}" {
		t.Errorf("DELIVERIES config: %+v transform %+v", dc, dc.SubjectTransform)
	}
}

// Every process calls Ensure at start, possibly at the same moment; a later
// call changes nothing (stream not recreated, messages kept) unless the
// config changed.
func TestEnsureIsIdempotentAndConcurrent(t *testing.T) {
	t.Parallel()
	ctx, js := startJS(t)

	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range cap(errs) {
		wg.Go(func() { errs <- Ensure(ctx, js, DefaultConfig()) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Ensure: %v", err)
		}
	}

	subj, _ := EventSubject("co_1", "sale.paid")
	if _, err := js.Publish(ctx, subj, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	before, err := js.Stream(ctx, EventsStream)
	if err != nil {
		t.Fatal(err)
	}

	if err := Ensure(ctx, js, DefaultConfig()); err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	after, err := js.Stream(ctx, EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	if !after.CachedInfo().Created.Equal(before.CachedInfo().Created) || after.CachedInfo().State.Msgs != 1 {
		t.Errorf("stream recreated or emptied: before %+v after %+v", before.CachedInfo(), after.CachedInfo())
	}

	// A changed config is applied in place.
	if err := Ensure(ctx, js, Config{Partitions: 4}); err != nil {
		t.Fatalf("Ensure with 4 partitions: %v", err)
	}
	dl, err := js.Stream(ctx, DeliveriesStream)
	if err != nil {
		t.Fatal(err)
	}
	if got := dl.CachedInfo().Config.SubjectTransform.Destination; got != "oficina.dlv.{{partition(4,1)}}.{{wildcard(1)}}.{{wildcard(2)}}" {
		t.Errorf("transform after update: %q", got)
	}
}

func TestEnsureRejectsBadConfig(t *testing.T) {
	t.Parallel()
	ctx, js := startJS(t)
	if err := Ensure(ctx, js, Config{Partitions: -2}); err == nil {
		t.Fatal("Ensure accepted negative partitions")
	}
}
