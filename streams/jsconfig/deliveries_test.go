package jsconfig

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// All deliveries of a company land on one partition, the one PartitionOf
// predicts, and companies spread over the partitions.
func TestDeliveriesPartitionedByCompany(t *testing.T) {
	t.Parallel()
	const partitions = 16
	ctx, js := ensured(t, Config{Partitions: partitions})

	const companies = 50
	for c := range companies {
		for e := range 2 {
			subj, err := DeliverySubject(fmt.Sprintf("co_%d", c), fmt.Sprintf("ep_%d", e))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish(ctx, subj, nil); err != nil {
				t.Fatalf("publish %s: %v", subj, err)
			}
		}
	}

	st, err := js.Stream(ctx, DeliveriesStream)
	if err != nil {
		t.Fatal(err)
	}
	partitionOf := map[string]int{}
	used := map[int]int{}
	for seq := uint64(1); seq <= 2*companies; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("get %d: %v", seq, err)
		}
		d, err := ParseDeliverySubject(m.Subject)
		if err != nil {
			t.Fatalf("stored subject: %v", err)
		}
		if want := PartitionOf(d.CompanyID, partitions); d.Partition != want {
			t.Errorf("%s: server partition %d, PartitionOf %d", m.Subject, d.Partition, want)
		}
		if p, seen := partitionOf[d.CompanyID]; seen && p != d.Partition {
			t.Errorf("%s split across partitions %d and %d", d.CompanyID, p, d.Partition)
		}
		partitionOf[d.CompanyID] = d.Partition
		used[d.Partition]++
	}
	if len(used) < partitions/2 {
		t.Errorf("50 companies use only %d of %d partitions: %v", len(used), partitions, used)
	}

	// A partition's consumer sees exactly its companies' deliveries.
	p := PartitionOf("co_0", partitions)
	cons, err := js.CreateConsumer(ctx, DeliveriesStream, jetstream.ConsumerConfig{
		Durable: fmt.Sprintf("dispatch-p%d", p), FilterSubject: PartitionFilter(p), AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		t.Fatalf("partition consumer: %v", err)
	}
	got := fetchAll(t, cons, used[p]+1, 2*time.Second)
	if len(got) != used[p] {
		t.Errorf("partition %d consumer got %d messages, want %d", p, len(got), used[p])
	}
	for _, m := range got {
		if d, _ := ParseDeliverySubject(m.Subject()); d.Partition != p {
			t.Errorf("partition %d consumer got %s", p, m.Subject())
		}
	}
}

func TestDeliveriesDedupByMsgID(t *testing.T) {
	t.Parallel()
	ctx, js := ensured(t, DefaultConfig())
	subj, _ := DeliverySubject("co_1", "ep_1")
	if _, err := js.Publish(ctx, subj, nil, jetstream.WithMsgID("dl_1")); err != nil {
		t.Fatal(err)
	}
	again, err := js.Publish(ctx, subj, nil, jetstream.WithMsgID("dl_1"))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate {
		t.Errorf("re-publish of dl_1 not dropped: %+v", again)
	}
}

// partitionConsumer is the durable consumer a dispatcher would own.
func partitionConsumer(t *testing.T, js jetstream.JetStream, companyID string, partitions int) jetstream.Consumer {
	t.Helper()
	p := PartitionOf(companyID, partitions)
	cons, err := js.CreateOrUpdateConsumer(t.Context(), DeliveriesStream, jetstream.ConsumerConfig{
		Durable: fmt.Sprintf("dispatch-p%d", p), FilterSubject: PartitionFilter(p), AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		t.Fatalf("partition consumer: %v", err)
	}
	return cons
}

// The retry design end to end: a failed attempt schedules the next one with
// RetryMsg and acks; nothing is delivered before the due time, and then the
// same delivery comes back on its company's partition subject.
func TestRetryFiresOnPartitionAfterDueTime(t *testing.T) {
	t.Parallel()
	const partitions = 8
	ctx, js := ensured(t, Config{Partitions: partitions})
	cons := partitionConsumer(t, js, "co_1", partitions)

	subj, err := DeliverySubject("co_1", "ep_1")
	if err != nil {
		t.Fatal(err)
	}
	first := nats.NewMsg(subj)
	first.Header.Set("Oficina-Delivery-Id", "dl_1")
	first.Data = []byte(`{"type":"sale.paid"}`)
	if _, err := js.PublishMsg(ctx, first, jetstream.WithMsgID("dl_1")); err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
	if err != nil {
		t.Fatalf("first attempt: %v", err)
	}
	partitionSubject := fmt.Sprintf("oficina.dlv.%d.co_1.ep_1", PartitionOf("co_1", partitions))
	if m.Subject() != partitionSubject {
		t.Fatalf("first attempt on %s, want %s", m.Subject(), partitionSubject)
	}

	// The attempt failed: schedule the retry, then ack the original.
	due := ceilSecond(time.Now().Add(2 * time.Second))
	retry, err := RetryMsg("co_1", "ep_1", "dl_1", due, m.Headers(), m.Data())
	if err != nil {
		t.Fatal(err)
	}
	if ack, err := js.PublishMsg(ctx, retry); err != nil || ack.Duplicate {
		t.Fatalf("schedule retry: %+v %v", ack, err)
	}
	if err := m.DoubleAck(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, DeliveriesStream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetLastMsgForSubject(ctx, retry.Subject); err != nil {
		t.Fatalf("pending schedule not stored on %s: %v", retry.Subject, err)
	}

	// Nothing before the due time (the consumer waits until 300ms before it).
	if early := fetchAll(t, cons, 1, time.Until(due)-300*time.Millisecond); len(early) != 0 {
		t.Fatalf("retry delivered %v before due time %v", time.Until(due), due)
	}
	got := fetchAll(t, cons, 1, 5*time.Second)
	if len(got) != 1 {
		t.Fatalf("retry not delivered within 5s of due time %v", due)
	}
	if now := time.Now(); now.Before(due) {
		t.Errorf("retry received at %v, before due %v", now, due)
	}
	r := got[0]
	if r.Subject() != partitionSubject || string(r.Data()) != `{"type":"sale.paid"}` ||
		r.Headers().Get("Oficina-Delivery-Id") != "dl_1" ||
		r.Headers().Get(jetstream.SchedulerHeader) != retry.Subject {
		t.Errorf("retry: subject %s data %s headers %v", r.Subject(), r.Data(), r.Headers())
	}

	// The server purged the schedule when it fired; with the retry acked the
	// work queue is empty.
	if err := waitFor(t, 2*time.Second, func() bool {
		info, err := st.Info(ctx)
		return err == nil && info.State.Msgs == 0
	}); err != nil {
		info, _ := st.Info(ctx)
		t.Errorf("stream not empty after retry: %+v", info.State)
	}
}

// Re-scheduling a delivery replaces its pending retry (the schedule subject
// is rolled up), while retries of two deliveries of one endpoint coexist.
func TestRescheduleReplacesOnlySameDelivery(t *testing.T) {
	t.Parallel()
	const partitions = 4
	ctx, js := ensured(t, Config{Partitions: partitions})
	cons := partitionConsumer(t, js, "co_1", partitions)

	now := time.Now()
	sooner, later := ceilSecond(now.Add(time.Second)), ceilSecond(now.Add(2*time.Second))
	for _, s := range []struct {
		delivery string
		at       time.Time
	}{{"dl_1", sooner}, {"dl_1", later}, {"dl_2", sooner}} {
		h := nats.Header{}
		h.Set("Oficina-Delivery-Id", s.delivery)
		msg, err := RetryMsg("co_1", "ep_1", s.delivery, s.at, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}

	got := fetchAll(t, cons, 3, time.Until(later)+3*time.Second)
	if len(got) != 2 {
		t.Fatalf("got %d retries, want 2 (dl_1 once, dl_2 once)", len(got))
	}
	if a, b := got[0].Headers().Get("Oficina-Delivery-Id"), got[1].Headers().Get("Oficina-Delivery-Id"); a != "dl_2" || b != "dl_1" {
		t.Errorf("order %s, %s; want dl_2 (sooner) then dl_1 (rescheduled later)", a, b)
	}
}

// Purging an endpoint's schedule subjects cancels its pending retries
// (endpoint disabled or deleted).
func TestPurgeCancelsEndpointRetries(t *testing.T) {
	t.Parallel()
	const partitions = 4
	ctx, js := ensured(t, Config{Partitions: partitions})
	cons := partitionConsumer(t, js, "co_1", partitions)

	due := ceilSecond(time.Now().Add(time.Second))
	for _, ep := range []string{"ep_1", "ep_2"} {
		msg, err := RetryMsg("co_1", ep, "dl_"+ep, due, nil, []byte(ep))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	st, err := js.Stream(ctx, DeliveriesStream)
	if err != nil {
		t.Fatal(err)
	}
	filter, _ := EndpointSchedulesFilter("co_1", "ep_1")
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(filter)); err != nil {
		t.Fatal(err)
	}

	got := fetchAll(t, cons, 2, time.Until(due)+2*time.Second)
	if len(got) != 1 || string(got[0].Data()) != "ep_2" {
		var bodies []string
		for _, m := range got {
			bodies = append(bodies, string(m.Data()))
		}
		t.Errorf("got %v, want only ep_2's retry", bodies)
	}
}

// waitFor polls cond until true or timeout.
func waitFor(t *testing.T, timeout time.Duration, cond func() bool) error {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v", timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
