package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// buildBinary compiles oficina/cmd/oficina into dir, fresh for the run:
// the packages it is made of change between runs.
func buildBinary(ctx context.Context, moduleDir, dir string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("build: %w", err)
	}
	if moduleDir == "" {
		out, err := exec.CommandContext(ctx, gobin, "env", "GOMOD").Output()
		mod := strings.TrimSpace(string(out))
		if err != nil || mod == "" || mod == os.DevNull {
			return "", fmt.Errorf("build: not inside the oficina module (go env GOMOD: %q, %v); set Config.ModuleDir", mod, err)
		}
		moduleDir = filepath.Dir(mod)
	}
	bin := filepath.Join(dir, "oficina")
	cmd := exec.CommandContext(ctx, gobin, "build", "-o", bin, "./cmd/oficina")
	cmd.Dir = moduleDir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build: %w: %s", err, out.String())
	}
	return bin, nil
}

// child is one oficina process of the run, supervised as a service
// manager would: when it exits on its own it is noted and started again a
// second later. A fault holds it down (kill9) until restart.
type child struct {
	name    string
	bin     string
	args    []string
	env     []string
	logPath string
	readyz  string // admin /readyz URL of a `serve`; empty for the others

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current process exits
	held   bool          // down on purpose: a fault, or the end of the run
	starts int
	exits  []exit // exits nobody asked for
}

// exit is an exit of a child that nobody asked for.
type exit struct {
	at  time.Time
	msg string
}

func newChild(name, bin string, args, env []string, dir string) *child {
	return &child{name: name, bin: bin, args: args, env: env, logPath: filepath.Join(dir, name+".log")}
}

// start starts the process (the caller holds no lock).
func (c *child) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startLocked()
}

func (c *child) startLocked() error {
	logf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own copy
	c.starts++
	fmt.Fprintf(logf, "=== start %d at %s\n", c.starts, time.Now().Format(time.TimeOnly+".000"))
	cmd := exec.Command(c.bin, c.args...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so a kill reaches anything it starts; and it
	// dies with this process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start: %w", c.name, err)
	}
	exited := make(chan struct{})
	c.cmd, c.exited = cmd, exited
	go c.wait(cmd, exited)
	return nil
}

// wait reaps the process and restarts it if nobody held it down.
func (c *child) wait(cmd *exec.Cmd, exited chan struct{}) {
	err := cmd.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	close(exited)
	if c.held || c.cmd != cmd {
		return
	}
	c.exits = append(c.exits, exit{at: time.Now(), msg: fmt.Sprintf("%v (log: %s)", err, c.tail(2))})
	time.AfterFunc(time.Second, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.held || c.cmd != cmd {
			return
		}
		if err := c.startLocked(); err != nil {
			c.exits = append(c.exits, exit{at: time.Now(), msg: err.Error()})
		}
	})
}

// hold keeps the process from being restarted by its watcher and returns
// what runs now (nil cmd: nothing).
func (c *child) hold() (*exec.Cmd, chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = true
	return c.cmd, c.exited
}

// kill9 kills the process group with SIGKILL, holds it down and waits
// until it is gone.
func (c *child) kill9() {
	cmd, exited := c.hold()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// restart starts a held process again and waits until it is ready.
func (c *child) restart(ctx context.Context) error {
	c.mu.Lock()
	c.held = false
	err := c.startLocked()
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.waitReady(ctx)
}

// waitReady waits until a `serve` answers /readyz (others: at once),
// through the restarts of the supervisor.
func (c *child) waitReady(ctx context.Context) error {
	if c.readyz == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if resp, err := client.Get(c.readyz); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (log: %s)", c.name, ctx.Err(), c.tail(3))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// running reports whether the process is up now.
func (c *child) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exited == nil {
		return false
	}
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// stop ends the process for good: SIGTERM, SIGKILL after grace.
func (c *child) stop(grace time.Duration) {
	cmd, exited := c.hold()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// unexpectedExits are the exits nobody asked for, timed from t0.
func (c *child) unexpectedExits(t0 time.Time) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.exits {
		out = append(out, fmt.Sprintf("%s at %+.1fs: %s", c.name, e.at.Sub(t0).Seconds(), e.msg))
	}
	return out
}

// tail is the last n lines of the process's log.
func (c *child) tail(n int) string {
	b, _ := os.ReadFile(c.logPath)
	return lastLines(string(b), n)
}

// freePort is a loopback port free right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("not a TCP address")
	}
	return addr.Port, nil
}

// runOnce runs the binary to completion (oficina migrate).
func runOnce(ctx context.Context, bin string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("oficina %s: %w: %s", strings.Join(args, " "), err, lastLines(out.String(), 5))
	}
	return nil
}
