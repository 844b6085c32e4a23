// Package pace paces the proving runs' writers: a number of lanes (a
// company each, or one probe), each sending on its own ticker until
// stopped. What a send does and how its answers are counted stays with
// the run (ops/proving/chaos, ops/proving/scaleout); only the pacing and
// the stop are shared, so both stop the same way.
package pace

import (
	"context"
	"sync"
	"time"
)

// Driver is a running load.
type Driver struct {
	quit chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// Start runs lanes writers; each calls send(ctx, lane, n) once every
// `every` (the first after one interval), n counting that lane's sends from
// 0, until Stop is called or ctx ends.
func Start(ctx context.Context, lanes int, every time.Duration, send func(ctx context.Context, lane, n int)) *Driver {
	d := &Driver{quit: make(chan struct{})}
	for lane := range lanes {
		d.wg.Go(func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-d.quit:
					return
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				send(ctx, lane, n)
			}
		})
	}
	return d
}

// Stop ends the load once the sends in flight have returned (a request cut
// off could commit unseen). It may be called more than once.
func (d *Driver) Stop() {
	d.once.Do(func() { close(d.quit) })
	d.wg.Wait()
}
