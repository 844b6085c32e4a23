package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Profiler takes Go CPU profiles of the oficina processes while a
// scenario runs (`oficina bench -profile DIR`), from the /debug/pprof/
// each serves on its metrics listener with OFICINA_PPROF: what the API and
// the dispatcher spend their share of the machine on (docs/performance.md).
type Profiler struct {
	Dir string
	// Addrs are the processes' metrics listeners by process name.
	Addrs map[string]string
	// Log receives a profile that could not be taken; the run goes on.
	Log func(format string, a ...any)
}

// During starts a profile of every process for d, written to
// <Dir>/<name>.<process>.pprof; wait returns when they are written. A nil
// Profiler takes none.
func (p *Profiler) During(ctx context.Context, name string, d time.Duration) (wait func()) {
	if p == nil {
		return func() {}
	}
	secs := max(1, int(d.Seconds()))
	var wg sync.WaitGroup
	for proc, addr := range p.Addrs {
		wg.Go(func() {
			path := filepath.Join(p.Dir, name+"."+proc+".pprof")
			if err := fetchProfile(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), path); err != nil && p.Log != nil {
				p.Log("bench: profile of %s during %s: %v", proc, name, err)
			}
		})
	}
	return wg.Wait
}

// Heap writes every process's heap profile (what is in use now and what
// was allocated since it started) to <Dir>/heap.<process>.pprof. A nil
// Profiler writes none.
func (p *Profiler) Heap(ctx context.Context) {
	if p == nil {
		return
	}
	for proc, addr := range p.Addrs {
		path := filepath.Join(p.Dir, "heap."+proc+".pprof")
		if err := fetchProfile(ctx, "http://"+addr+"/debug/pprof/heap", path); err != nil && p.Log != nil {
			p.Log("bench: heap profile of %s: %v", proc, err)
		}
	}
}

func fetchProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
