package jsconfig

import (
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// RetryMsg builds the message that sends a delivery again at `at` (a retry,
// or a parked message's later turn). Publish it with JetStream; the stream
// stores it on ScheduleSubject and, at the due time, republishes body and
// headers to DeliverySubject(companyID, endpointID), which the stream's
// transform puts on the company's partition like a first attempt. The
// dispatcher acks the original after this publish is acknowledged, so a
// waiting retry holds no consumer slot.
//
// header is copied without its Nats-* entries: a Nats-Msg-Id equal to the
// delivery id would make the schedule a duplicate of the original publish
// (inside the duplicate window) and drop it silently, and the Nats-Scheduler
// / Nats-Schedule-Next headers a fired retry carries are rejected on publish.
//
// `at` is rounded up to the whole second (the @at format is RFC 3339 seconds):
// a retry may come up to 1s late, never early. The server fires at its wall
// clock, not an injected one; a time in the past fires at once.
func RetryMsg(companyID, endpointID, deliveryID string, at time.Time, header nats.Header, body []byte) (*nats.Msg, error) {
	subject, err := ScheduleSubject(companyID, endpointID, deliveryID)
	if err != nil {
		return nil, err
	}
	target, err := DeliverySubject(companyID, endpointID)
	if err != nil {
		return nil, err
	}
	if at.IsZero() {
		return nil, fmt.Errorf("jsconfig: retry of %s: zero time", deliveryID)
	}
	msg := nats.NewMsg(subject)
	for k, vs := range header {
		if strings.HasPrefix(strings.ToLower(k), "nats-") {
			continue
		}
		msg.Header[k] = append([]string(nil), vs...)
	}
	msg.Header.Set(jetstream.ScheduleHeader, "@at "+ceilSecond(at).Format(time.RFC3339))
	msg.Header.Set(jetstream.ScheduleTargetHeader, target)
	msg.Data = body
	return msg, nil
}

// ceilSecond rounds t up to a whole second, in UTC.
func ceilSecond(t time.Time) time.Time {
	t = t.UTC()
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second)
	}
	return t
}
