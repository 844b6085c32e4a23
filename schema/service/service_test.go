package service_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"oficina/schema/service"
)

func TestZeroBaseTakesTheDefaults(t *testing.T) {
	var b service.Base
	if b.Logger() != slog.Default() {
		t.Error("nil Log: want slog.Default")
	}
	before := time.Now()
	if n, w := b.BusinessNow(), b.WallNow(); n.Before(before) || w.Before(before) {
		t.Errorf("zero clocks read %v and %v, before %v", n, w, before)
	}
}

func TestTheTwoClocksAreReadApart(t *testing.T) {
	business := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	wall := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	b := service.Base{Now: func() time.Time { return business }, Wall: func() time.Time { return wall }}
	if !b.BusinessNow().Equal(business) || !b.WallNow().Equal(wall) {
		t.Errorf("business %v wall %v", b.BusinessNow(), b.WallNow())
	}
}

// Every runs a round at once, logs failures and work done, and returns
// nil when its context ends.
func TestEveryRunsRoundsUntilTheContextEnds(t *testing.T) {
	var buf bytes.Buffer
	b := service.Base{Log: slog.New(slog.NewTextHandler(&buf, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	rounds := 0
	err := b.Every(ctx, time.Millisecond, "worker", func(context.Context) (int, error) {
		rounds++
		switch rounds {
		case 1:
			return 0, errors.New("boom")
		case 2:
			return 3, nil
		}
		cancel()
		return 0, nil
	})
	if err != nil || rounds != 3 {
		t.Fatalf("Every: %v after %d rounds", err, rounds)
	}
	out := buf.String()
	if !strings.Contains(out, "error=boom") || !strings.Contains(out, "count=3") {
		t.Errorf("log %q", out)
	}
}
