package sse_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"oficina/http/sse"
)

// What Write writes, Read reads back, message by message, with the
// comments and retry lines of a live stream between; a message without data
// is no message; a line break cannot be written.
func TestWhatIsWrittenIsReadBack(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("retry: 2000\n\n: keep-alive\n\n")
	want := []sse.Message{{ID: "7", Event: "sale.paid", Data: `{"id":"evt_1"}`}, {ID: "9", Event: "client.created", Data: "{}"}}
	for _, m := range want {
		if err := sse.Write(&b, m); err != nil {
			t.Fatal(err)
		}
		b.WriteString(": keep-alive\n\nid: 8\nevent: x\n\n")
	}
	var got []sse.Message
	if err := sse.Read(&b, func(m sse.Message) error { got = append(got, m); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	if err := sse.Write(&b, sse.Message{ID: "1", Data: "a\nid: 2"}); err == nil {
		t.Error("a line break in data was written")
	}
	stop := errors.New("stop")
	if err := sse.Read(strings.NewReader("data: a\n\ndata: b\n\n"), func(sse.Message) error { return stop }); err != stop {
		t.Errorf("fn's error: %v", err)
	}
}
