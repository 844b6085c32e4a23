package natsembed

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestStartServesJetStream(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	srv, err := Start(ctx, Config{Port: -1, StoreDir: t.TempDir(), ServerName: "solo"})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	if srv.Name() != "solo" {
		t.Errorf("Name = %q, want solo", srv.Name())
	}

	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}})
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if _, err := js.Publish(ctx, "t.a", []byte("hello")); err != nil {
		t.Fatalf("publish: %v", err)
	}
	msg, err := st.GetLastMsgForSubject(ctx, "t.a")
	if err != nil {
		t.Fatal(err)
	}
	if string(msg.Data) != "hello" {
		t.Errorf("data = %q", msg.Data)
	}
}

func TestStartRequiresStoreDir(t *testing.T) {
	t.Parallel()
	if _, err := Start(context.Background(), Config{Port: -1}); err == nil {
		t.Fatal("Start without StoreDir succeeded")
	}
}

// A taken port must come back as an error, quickly: the server's default
// logger would have exited the process on this fatal.
func TestStartPortInUseIsAnError(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	start := time.Now()
	_, err = Start(context.Background(), Config{Port: port, StoreDir: t.TempDir(), ReadyTimeout: 5 * time.Second})
	if err == nil {
		t.Fatalf("Start on busy port %s succeeded", strconv.Itoa(port))
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("took %v; want the fatal reported before the ready timeout", time.Since(start))
	}
}

func TestStartHonoursCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Start(ctx, Config{Port: -1, StoreDir: t.TempDir()})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
