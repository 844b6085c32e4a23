// Package sse reads and writes server-sent events (text/event-stream, the
// HTML standard's format) as GET /events/stream sends them: messages of
// "id", "event" and one "data" line, each ended by a blank line, with
// comment lines (":") and "retry" between. The server writes with Write;
// `oficina listen`, the contract check and the tests read with Read.
package sse

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// ContentType is the media type of a stream.
const ContentType = "text/event-stream"

// Message is one event of a stream.
type Message struct {
	ID    string // the position to resume after (Last-Event-ID)
	Event string // the event's type
	Data  string // one line: the envelope's JSON
}

// Write writes m; its fields must not hold a line break.
func Write(w io.Writer, m Message) error {
	if strings.ContainsAny(m.ID+m.Event+m.Data, "\r\n") {
		return fmt.Errorf("sse: a line break in message %q", m.ID)
	}
	_, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", m.ID, m.Event, m.Data)
	return err
}

// MaxLine bounds a line read: an envelope is at most 256 KB.
const MaxLine = 1 << 20

// Read calls fn with each message of r that has data, in order, until r
// ends (nil) or fn or the reading fails. Comments, retry lines and fields
// the format does not know are skipped, as the standard says.
func Read(r io.Reader, fn func(Message) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	var m Message
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if m.Data != "" {
				if err := fn(m); err != nil {
					return err
				}
			}
			m = Message{}
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		switch k {
		case "id":
			m.ID = v
		case "event":
			m.Event = v
		case "data":
			m.Data = v
		}
	}
	return sc.Err()
}
