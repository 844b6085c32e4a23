package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is an oficina process of the run — the API (`serve`) or a
// dispatcher — started as it is deployed, so each is measured on its own
// (peak RSS) and neither shares a Go runtime with the load generator.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	done chan error
}

// StartProc runs bin with args and env (added to this process's
// environment); its output goes to out.
func StartProc(name, bin string, args, env []string, out io.Writer) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// WaitReady polls url until it answers 200, the process exits or ctx ends.
func (p *Proc) WaitReady(ctx context.Context, url string) error {
	for {
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-p.done:
			return fmt.Errorf("bench: %s exited before ready: %v", p.Name, err)
		case <-ctx.Done():
			return fmt.Errorf("bench: %s not ready: %w", p.Name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// PeakRSSMB is the process's peak resident set so far (VmHWM), in MiB.
func (p *Proc) PeakRSSMB() (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("bench: %s rss: %w", p.Name, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("bench: %s rss %q: %w", p.Name, v, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("bench: no VmHWM in /proc status")
}

// Stop asks the process to end (SIGTERM) and kills it after grace.
func (p *Proc) Stop(grace time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// FreeAddr returns a loopback address with a port free right now.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
