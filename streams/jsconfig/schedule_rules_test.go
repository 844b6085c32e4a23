package jsconfig

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Pins the server rules the retry layout relies on (see ops/natsembed/NOTES.md).
func TestScheduleServerRules(t *testing.T) {
	t.Parallel()
	ctx, js := ensured(t, Config{Partitions: 4})
	at := time.Now().Add(time.Hour)

	schedule := func(subject, target string, id string) (*jetstream.PubAck, error) {
		m := nats.NewMsg(subject)
		m.Header.Set(jetstream.ScheduleHeader, "@at "+ceilSecond(at).Format(time.RFC3339))
		m.Header.Set(jetstream.ScheduleTargetHeader, target)
		if id != "" {
			m.Header.Set(jetstream.MsgIDHeader, id)
		}
		return js.PublishMsg(ctx, m)
	}
	sched, _ := ScheduleSubject("co_1", "ep_1", "dl_1")

	// The target must be one of this stream's own (pre-transform) subjects:
	// not another stream's, and not the partition subject the transform
	// produces — a retry targets oficina.deliveries.<co>.<ep>.
	for _, target := range []string{"oficina.events.co_1.sale.paid", "oficina.dlv.1.co_1.ep_1"} {
		if _, err := schedule(sched, target, ""); !errors.Is(err, jetstream.ErrScheduleTargetInvalid) {
			t.Errorf("target %s: err %v, want ErrScheduleTargetInvalid", target, err)
		}
	}
	// A schedule may not target its own subject.
	if _, err := schedule(sched, sched, ""); !errors.Is(err, jetstream.ErrScheduleTargetInvalid) {
		t.Errorf("self target: err %v", err)
	}

	// Why RetryMsg drops Nats-Msg-Id: reusing the delivery id inside the
	// duplicate window silently drops the schedule.
	subj, _ := DeliverySubject("co_1", "ep_1")
	if _, err := js.Publish(ctx, subj, nil, jetstream.WithMsgID("dl_1")); err != nil {
		t.Fatal(err)
	}
	ack, err := schedule(sched, subj, "dl_1")
	if err != nil || !ack.Duplicate {
		t.Errorf("schedule with the delivery's msg id: ack %+v err %v, want a duplicate", ack, err)
	}

	// EVENTS does not allow schedules.
	ev, _ := EventSubject("co_1", "sale.paid")
	if _, err := schedule(ev, "oficina.events.co_1.sale.refunded", ""); !errors.Is(err, jetstream.ErrMessageSchedulesDisabled) {
		t.Errorf("schedule on EVENTS: %v", err)
	}
}
