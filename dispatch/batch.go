package dispatch

import (
	"context"
	"sync"
)

// batcher runs the dispatcher's database work as group commits: requests
// that queue while a transaction runs share the next one, so BEGIN, COMMIT
// (and the commit's fsync) are paid per batch instead of per delivery. At
// low load a batch holds one request and adds no wait; at high load batches
// grow by themselves up to max.
type batcher[Req, Res any] struct {
	in  chan batchItem[Req, Res]
	max int
	// run handles a whole batch and returns one result per request, in order.
	run func(ctx context.Context, reqs []Req) []batchResult[Res]
}

type batchItem[Req, Res any] struct {
	req  Req
	done chan batchResult[Res]
}

type batchResult[Res any] struct {
	res Res
	err error
}

// allFailed is the result of a batch that failed as a whole.
func allFailed[Res any](n int, err error) []batchResult[Res] {
	out := make([]batchResult[Res], n)
	for i := range out {
		out[i].err = err
	}
	return out
}

func newBatcher[Req, Res any](max int, run func(context.Context, []Req) []batchResult[Res]) *batcher[Req, Res] {
	return &batcher[Req, Res]{in: make(chan batchItem[Req, Res]), max: max, run: run}
}

// loop serves batches with workers goroutines until ctx ends; a request
// queued when it ends gets ctx's error.
func (b *batcher[Req, Res]) loop(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var items []batchItem[Req, Res]
			for {
				select {
				case <-ctx.Done():
					return
				case it := <-b.in:
					items = append(items[:0], it)
				}
			drain:
				for len(items) < b.max {
					select {
					case it := <-b.in:
						items = append(items, it)
					default:
						break drain
					}
				}
				b.serve(ctx, items)
			}
		})
	}
	wg.Wait()
}

func (b *batcher[Req, Res]) serve(ctx context.Context, items []batchItem[Req, Res]) {
	reqs := make([]Req, len(items))
	for i, it := range items {
		reqs[i] = it.req
	}
	res := b.run(ctx, reqs)
	for i, it := range items {
		it.done <- res[i] // buffered: the caller may have gone
	}
}

// do queues req for the next batch and waits for its result. A caller that
// gives up (ctx) leaves its request to run; its result is dropped.
func (b *batcher[Req, Res]) do(ctx context.Context, req Req) (Res, error) {
	it := batchItem[Req, Res]{req: req, done: make(chan batchResult[Res], 1)}
	var zero Res
	select {
	case b.in <- it:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case r := <-it.done:
		return r.res, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}
