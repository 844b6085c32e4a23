package jsconfig

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Await returns once every named stream exists, asking again with a
// growing pause (up to 5 s) and telling waiting about each miss, or when
// ctx ends. Processes whose NATS user may not create the streams (relay,
// dispatch) call it instead of Ensure, so they may start before serve.
func Await(ctx context.Context, js jetstream.JetStream, waiting func(stream string, err error), names ...string) error {
	pause := 250 * time.Millisecond
	for _, name := range names {
		for {
			ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := js.Stream(ictx, name)
			cancel()
			if err == nil {
				break
			}
			if waiting != nil {
				waiting(name, err)
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("jsconfig: waiting for stream %s: %w", name, ctx.Err())
			case <-time.After(pause):
			}
			pause = min(2*pause, 5*time.Second)
		}
	}
	return nil
}
