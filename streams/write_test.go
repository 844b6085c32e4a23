package streams_test

import (
	"context"
	"testing"
	"time"

	"oficina/schema/ids"
	"oficina/streams"
)

// A statement queued with Later runs at the unit's COMMIT: kept with the
// write, dropped with Discard, and a failing one rolls the whole write back
// (what the write did before it included) and is Run's error.
func TestLaterRunsWithTheCommitOfItsWrite(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	wr := &streams.Writer{DB: co.DB}
	kept, discarded, before := ids.New("evt"), ids.New("evt"), ids.New("evt")
	// One time for every row: an event's key is its id and its day's time
	// (the log is partitioned by created_at, decision 0027).
	at := time.Now()
	row := func(id string) *streams.OutboxEvent {
		return &streams.OutboxEvent{ID: id, CompanyID: co.Company.ID, Type: "client.created", Body: []byte(`{}`),
			OccurredAt: at, CreatedAt: at}
	}
	for _, tc := range []struct {
		name  string
		fn    func(ctx context.Context, w *streams.Write) error
		fails bool
	}{
		{name: "kept", fn: func(ctx context.Context, w *streams.Write) error {
			return w.Later(ctx, w.Tx.NewInsert().Model(row(kept)))
		}},
		{name: "discarded", fn: func(ctx context.Context, w *streams.Write) error {
			err := w.Later(ctx, w.Tx.NewInsert().Model(row(discarded)))
			w.Discard()
			return err
		}},
		{name: "failing", fails: true, fn: func(ctx context.Context, w *streams.Write) error {
			if _, err := w.Tx.NewInsert().Model(row(before)).Exec(ctx); err != nil {
				return err
			}
			// The same id again: the primary key refuses it at COMMIT.
			return w.Later(ctx, w.Tx.NewInsert().Model(row(before)))
		}},
	} {
		err := wr.Run(context.Background(), streams.Unit{CompanyID: co.Company.ID}, tc.fn)
		if (err != nil) != tc.fails {
			t.Errorf("%s: run: %v", tc.name, err)
		}
	}
	var got []string
	for _, e := range outbox(t, co) {
		got = append(got, e.ID)
	}
	if len(got) != 1 || got[0] != kept {
		t.Errorf("outbox holds %v, want only %s", got, kept)
	}
}
