package jsconfig

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestSubjectTokensAreValidated(t *testing.T) {
	t.Parallel()
	bad := []string{"", "co.1", "co*", "co>", "co 1", "co\t1", "co\n", "\x00"}
	for _, id := range bad {
		if err := ValidToken(id); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("ValidToken(%q) = %v, want ErrInvalidToken", id, err)
		}
		if _, err := EventSubject(id, "sale.paid"); err == nil {
			t.Errorf("EventSubject(%q) accepted", id)
		}
		if _, err := DeliverySubject("co_1", id); err == nil {
			t.Errorf("DeliverySubject endpoint %q accepted", id)
		}
		if _, err := ScheduleSubject("co_1", "ep_1", id); err == nil {
			t.Errorf("ScheduleSubject delivery %q accepted", id)
		}
	}
	for _, typ := range []string{"", "sale.", ".paid", "sale..paid", "sale.*", "sale.>", "sale paid"} {
		if _, err := EventSubject("co_1", typ); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("EventSubject type %q: %v, want ErrInvalidToken", typ, err)
		}
	}
	if err := ValidToken("co_01HZX-ü"); err != nil {
		t.Errorf("ValidToken rejected a plain id: %v", err)
	}
}

func TestSubjectLayout(t *testing.T) {
	t.Parallel()
	must := func(s string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := map[string]string{
		must(EventSubject("co_123", "sale.paid")):     "oficina.events.co_123.sale.paid",
		must(CompanyEventsFilter("co_123")):           "oficina.events.co_123.>",
		must(EventTypeFilter("sale.paid")):            "oficina.events.*.sale.paid",
		must(DeliverySubject("co_1", "ep_2")):         "oficina.deliveries.co_1.ep_2",
		must(ScheduleSubject("co_1", "ep_2", "dl_3")): "oficina.dlvsched.co_1.ep_2.dl_3",
		must(EndpointSchedulesFilter("co_1", "ep_2")): "oficina.dlvsched.co_1.ep_2.*",
		PartitionFilter(7):                            "oficina.dlv.7.>",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}

	d, err := ParseDeliverySubject("oficina.dlv.11.co_1.ep_2")
	if err != nil || d != (StoredDelivery{Partition: 11, CompanyID: "co_1", EndpointID: "ep_2"}) {
		t.Errorf("ParseDeliverySubject = %+v, %v", d, err)
	}
	for _, s := range []string{"oficina.deliveries.co_1.ep_2", "oficina.dlv.x.co_1.ep_2", "oficina.dlv.1.co_1", "oficina.dlv.1.co_1.ep.x"} {
		if _, err := ParseDeliverySubject(s); err == nil {
			t.Errorf("ParseDeliverySubject(%q) accepted", s)
		}
	}
}

func TestRetryMsgHeaders(t *testing.T) {
	t.Parallel()
	hdr := nats.Header{}
	hdr.Set("Oficina-Attempt", "3")
	hdr.Set(jetstream.MsgIDHeader, "dl_3")      // must not make the schedule a duplicate
	hdr.Set(jetstream.SchedulerHeader, "x.y.z") // carried by a fired retry; refused on publish
	at := time.Date(2030, 1, 2, 3, 4, 5, 1, time.FixedZone("x", 3600))

	msg, err := RetryMsg("co_1", "ep_2", "dl_3", at, hdr, []byte("body"))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Subject != "oficina.dlvsched.co_1.ep_2.dl_3" {
		t.Errorf("subject %q", msg.Subject)
	}
	// Rounded up to the second, in UTC: never early.
	if got := msg.Header.Get(jetstream.ScheduleHeader); got != "@at 2030-01-02T02:04:06Z" {
		t.Errorf("schedule %q", got)
	}
	if got := msg.Header.Get(jetstream.ScheduleTargetHeader); got != "oficina.deliveries.co_1.ep_2" {
		t.Errorf("target %q", got)
	}
	if msg.Header.Get("Oficina-Attempt") != "3" || msg.Header.Get(jetstream.MsgIDHeader) != "" || msg.Header.Get(jetstream.SchedulerHeader) != "" {
		t.Errorf("headers %v", msg.Header)
	}
	if hdr.Get(jetstream.MsgIDHeader) != "dl_3" {
		t.Error("RetryMsg changed the caller's header")
	}
	if _, err := RetryMsg("co_1", "ep_2", "dl_3", time.Time{}, nil, nil); err == nil {
		t.Error("zero time accepted")
	}
}

func TestConfigDefaultsAndValidation(t *testing.T) {
	t.Parallel()
	if got := (Config{}).withDefaults(); got != DefaultConfig() {
		t.Errorf("zero config defaults to %+v", got)
	}
	for _, c := range []Config{
		{Replicas: 6},
		{Replicas: -1},
		{Partitions: -1},
		{DuplicateWindow: 5 * 24 * time.Hour}, // longer than DELIVERIES max age
	} {
		if err := c.withDefaults().validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
