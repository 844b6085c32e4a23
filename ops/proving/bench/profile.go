package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// Profiler takes Go CPU profiles of the oficina processes while a
// scenario runs (`oficina bench -profile DIR`), from the /debug/pprof/
// each serves on its metrics listener with OFICINA_PPROF: what the API and
// the dispatcher spend their share of the machine on (docs/performance.md).
type Profiler struct {
	Dir string
	// Addrs are the processes' metrics listeners by process name.
	Addrs map[string]string
	// Token is the operator token the profiles are served behind.
	Token string
	// DB, when set, is the bench database, whose sessions track their
	// PL/pgSQL functions (track_functions, set by the rig): each profile
	// also writes <Dir>/<name>.postgres.txt, the functions' calls and time
	// during the run, heaviest first — PostgreSQL's side of the profile.
	DB *bun.DB
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
	if p.DB != nil {
		before, err := functionStats(ctx, p.DB)
		if err != nil && p.Log != nil {
			p.Log("bench: function statistics before %s: %v", name, err)
		}
		wg.Go(func() {
			sleepCtx(ctx, time.Duration(secs)*time.Second)
			// Backends flush their statistics when idle for a second.
			sleepCtx(ctx, 1500*time.Millisecond)
			after, err := functionStats(ctx, p.DB)
			if err == nil {
				err = os.WriteFile(filepath.Join(p.Dir, name+".postgres.txt"), []byte(renderFunctions(before, after, secs)), 0o644)
			}
			if err != nil && p.Log != nil {
				p.Log("bench: function statistics of %s: %v", name, err)
			}
		})
	}
	for proc, addr := range p.Addrs {
		wg.Go(func() {
			path := filepath.Join(p.Dir, name+"."+proc+".pprof")
			if err := p.fetch(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs), path); err != nil && p.Log != nil {
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
		if err := p.fetch(ctx, "http://"+addr+"/debug/pprof/heap", path); err != nil && p.Log != nil {
			p.Log("bench: heap profile of %s: %v", proc, err)
		}
	}
}

func (p *Profiler) fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+p.Token)
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

// fnStat is one row of pg_stat_user_functions.
type fnStat struct {
	Name        string
	Calls       int64
	Total, Self float64 // ms
}

func functionStats(ctx context.Context, db *bun.DB) (map[string]fnStat, error) {
	var rows []struct {
		Name  string  `bun:"funcname"`
		Calls int64   `bun:"calls"`
		Total float64 `bun:"total_time"`
		Self  float64 `bun:"self_time"`
	}
	if err := db.NewRaw("SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions").Scan(ctx, &rows); err != nil {
		return nil, err
	}
	out := map[string]fnStat{}
	for _, r := range rows {
		out[r.Name] = fnStat{Name: r.Name, Calls: r.Calls, Total: r.Total, Self: r.Self}
	}
	return out, nil
}

// renderFunctions lists what each function did between two readings
// secs apart, by self time (its own statements, not the functions it
// calls), heaviest first.
func renderFunctions(before, after map[string]fnStat, secs int) string {
	var d []fnStat
	for name, a := range after {
		b := before[name]
		if a.Calls > b.Calls {
			d = append(d, fnStat{Name: name, Calls: a.Calls - b.Calls, Total: a.Total - b.Total, Self: a.Self - b.Self})
		}
	}
	slices.SortFunc(d, func(x, y fnStat) int { return cmp.Compare(y.Self, x.Self) })
	var b strings.Builder
	fmt.Fprintf(&b, "# PL/pgSQL functions over %d s (pg_stat_user_functions, track_functions = pl)\n", secs)
	fmt.Fprintf(&b, "%-40s %10s %12s %12s %10s\n", "function", "calls/s", "self ms/s", "total ms/s", "ms/call")
	for _, f := range d {
		fmt.Fprintf(&b, "%-40s %10.1f %12.1f %12.1f %10.3f\n", f.Name, float64(f.Calls)/float64(secs),
			f.Self/float64(secs), f.Total/float64(secs), f.Total/float64(f.Calls))
	}
	return b.String()
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
