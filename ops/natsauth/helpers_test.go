package natsauth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/testkit"
	"oficina/streams/jsconfig"
)

// user is one connection as a role of the configuration, with the
// asynchronous errors (permission violations) the server sent it.
type user struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	errs <-chan error
}

func connect(t *testing.T, ns *testkit.SecureNATS, role string) user {
	t.Helper()
	nc, errs := ns.ConnectAs(t, role)
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return user{nc: nc, js: js, errs: errs}
}

// ctx is a bound for calls that must succeed.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// denied runs do and expects the server to refuse it: a permission
// violation naming subject arrives on the user's errors (the signal; a
// request would wait for its timeout, so it is cancelled then). do
// allowed fails the test when no violation came in time.
func (u user) denied(t *testing.T, subject string, do func(context.Context) error) {
	t.Helper()
	c, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- do(c) }()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case err := <-u.errs:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject+`"`) {
				return
			}
		case <-done:
			// A plain publish or subscribe returns at once, refused or
			// not: only the violation tells.
			done = nil
		case <-deadline:
			t.Fatalf("no permission violation on %s", subject)
		}
	}
}

// setUp creates the streams as serve does (the api user owns them).
func setUp(t *testing.T, api user) {
	t.Helper()
	if err := jsconfig.Ensure(ctx(t), api.js, jsconfig.Config{Partitions: 4}); err != nil {
		t.Fatalf("api user: Ensure: %v", err)
	}
}

// publish is an acknowledged JetStream publish.
func (u user) publish(t *testing.T, subject, body string) *jetstream.PubAck {
	t.Helper()
	ack, err := u.js.Publish(ctx(t), subject, []byte(body))
	if err != nil {
		t.Fatalf("publish %s: %v", subject, err)
	}
	return ack
}

// read fetches want messages through an ordered consumer filtered on filter.
func (u user) read(t *testing.T, filter string, want int) []string {
	t.Helper()
	cons, err := u.js.OrderedConsumer(ctx(t), jsconfig.EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		t.Fatalf("ordered consumer on %s: %v", filter, err)
	}
	var got []string
	batch, err := cons.Fetch(want, jetstream.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatalf("fetch %s: %v", filter, err)
	}
	for m := range batch.Messages() {
		got = append(got, m.Subject())
	}
	return got
}

// drain returns the errors received so far, for a failure message.
func drain(errs <-chan error) []error {
	var out []error
	for {
		select {
		case err := <-errs:
			out = append(out, err)
		default:
			return out
		}
	}
}
