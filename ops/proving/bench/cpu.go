package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Where a scenario's CPU goes: the machine is shared by the load
// generator, the receiver, NATS, PostgreSQL, the API and the dispatcher, so
// "what stops this figure" starts with which of them spends the cores. The
// meter reads Linux's own accounting (/proc), the same at any load, and
// reports CPU milliseconds per successful operation for each party, and how
// busy the machine was.

// userHZ is the kernel's clock tick of /proc times (USER_HZ, 100 on Linux
// for every architecture Go builds the bench for).
const userHZ = 100

// CPUMeter reads the CPU time of the parties of a run.
type CPUMeter struct {
	// Procs are the oficina processes by figure name (api, dispatch).
	Procs []*Proc
	// Proc is the root of /proc (tests); default /proc.
	Proc string
}

// CPUSnap is one reading: ticks by party and of the whole machine.
type CPUSnap struct {
	parties     map[string]uint64
	busy, total uint64
}

// Read takes a snapshot. PostgreSQL is every process named postgres,
// with the postmaster's reaped children (backends that ended); bench is
// this process: the load generator, the receiver and the embedded NATS.
func (m *CPUMeter) Read() (CPUSnap, error) {
	root := m.Proc
	if root == "" {
		root = "/proc"
	}
	s := CPUSnap{parties: map[string]uint64{}}
	var err error
	if s.busy, s.total, err = machineTicks(filepath.Join(root, "stat")); err != nil {
		return s, err
	}
	for _, p := range m.Procs {
		if p == nil || p.cmd.Process == nil {
			continue
		}
		_, t, err := procTicks(filepath.Join(root, strconv.Itoa(p.cmd.Process.Pid), "stat"))
		if err != nil {
			return s, err
		}
		s.parties[p.Name] = t
	}
	_, s.parties["bench"], err = procTicks(filepath.Join(root, "self", "stat"))
	if err != nil {
		return s, err
	}
	dirs, err := os.ReadDir(root)
	if err != nil {
		return s, err
	}
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		comm, t, err := procTicks(filepath.Join(root, d.Name(), "stat"))
		if err == nil && comm == "postgres" {
			s.parties["postgres"] += t
		}
	}
	return s, nil
}

// PerOp returns, for the interval from a to b in which ops operations
// succeeded, <name>_cpu_ms_<party> (CPU milliseconds per operation) for
// api, dispatch, postgres and bench, and <name>_machine_busy (the busy
// fraction of every core).
func (b CPUSnap) PerOp(a CPUSnap, name string, ops int) []Figure {
	var figs []Figure
	if ops > 0 {
		for _, party := range []string{"api", "dispatch", "postgres", "bench"} {
			d := float64(b.parties[party]-min(a.parties[party], b.parties[party])) * 1000 / userHZ
			figs = append(figs, Figure{name + "_cpu_ms_" + party, d / float64(ops), "ms/op"})
		}
	}
	if t := b.total - a.total; t > 0 {
		figs = append(figs, Figure{name + "_machine_busy", float64(b.busy-a.busy) / float64(t), "fraction"})
	}
	return figs
}

// machineTicks reads the first line of /proc/stat: busy and total ticks
// of every core (idle and iowait are not busy).
func machineTicks(path string) (busy, total uint64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("bench: cpu: %w", err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("bench: cpu: unexpected %s: %q", path, line)
	}
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: cpu: %s: %w", path, err)
		}
		if i >= 8 { // guest times are already counted in user
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, nil
}

// procTicks reads a process's name and its user and system ticks with
// those of its reaped children.
func procTicks(path string) (comm string, ticks uint64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	// The name is in parentheses and may hold spaces: the fields start
	// after the last ')'.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", 0, fmt.Errorf("bench: cpu: unexpected %s", path)
	}
	f := strings.Fields(string(b[end+1:]))
	// Fields 14–17 of stat (utime, stime, cutime, cstime) are f[11:15].
	if len(f) < 15 {
		return "", 0, fmt.Errorf("bench: cpu: short %s", path)
	}
	for _, v := range f[11:15] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return "", 0, fmt.Errorf("bench: cpu: %s: %w", path, err)
		}
		ticks += n
	}
	return string(b[open+1 : end]), ticks, nil
}

// cpuSpan measures the CPU of a span of runs; nil without a meter.
type cpuSpan struct {
	m     *CPUMeter
	start CPUSnap
	ops   int
}

func (m *CPUMeter) start() (*cpuSpan, error) {
	if m == nil {
		return nil, nil
	}
	s, err := m.Read()
	if err != nil {
		return nil, err
	}
	return &cpuSpan{m: m, start: s}, nil
}

// count adds the successful requests of samples.
func (c *cpuSpan) count(samples []sample) {
	if c == nil {
		return
	}
	for _, s := range samples {
		if !s.err {
			c.ops++
		}
	}
}

// add adds n operations.
func (c *cpuSpan) add(n int) {
	if c != nil {
		c.ops += n
	}
}

// figures reads the meter again and reports the span per operation.
func (c *cpuSpan) figures(name string) ([]Figure, error) {
	if c == nil {
		return nil, nil
	}
	end, err := c.m.Read()
	if err != nil {
		return nil, err
	}
	return end.PerOp(c.start, name, c.ops), nil
}
