package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgres is a PostgreSQL server of the run's own: initdb'd into a
// temporary directory and run as a child of this process, so the run can
// crash and restart it without disturbing the shared cluster.
type postgres struct {
	bin     string // directory holding initdb and postgres
	base    string // owned by the server's user: data/, the socket, the log
	port    int
	cred    *syscall.Credential // the postgres user's, when running as root
	logPath string
	log     *os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the current postmaster exits
}

// pgBinDir finds the server binaries: dir when given, else the newest
// /usr/lib/postgresql/<version>/bin, else pg_config --bindir.
func pgBinDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	slices.SortFunc(found, func(a, b string) int { return pgVersion(a) - pgVersion(b) })
	if len(found) > 0 {
		return filepath.Dir(found[len(found)-1]), nil
	}
	out, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return "", errors.New("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin, pg_config)")
	}
	return strings.TrimSpace(string(out)), nil
}

func pgVersion(path string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return v
}

// startPostgres initialises a cluster and starts it on a free loopback
// port, logging to logPath (default: in its directory). initdb refuses to
// run as root, so as root the server runs as the postgres user, in a
// directory that user owns.
func startPostgres(ctx context.Context, binDir, logPath string) (_ *postgres, err error) {
	bin, err := pgBinDir(binDir)
	if err != nil {
		return nil, err
	}
	p := &postgres{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user to run initdb as: %w", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// Not under t.TempDir(): its parents are private to root, and the
	// server's user must reach its directory.
	if p.base, err = os.MkdirTemp("", "oficina-chaos-pg-"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if p.cred != nil {
		if err := os.Chown(p.base, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			return nil, err
		}
	}
	initdb := p.command(ctx, "initdb", "-D", p.dataDir(), "-A", "trust", "-U", "postgres", "-E", "UTF8",
		"--locale=C", "--no-sync")
	var out bytes.Buffer
	initdb.Stdout, initdb.Stderr = &out, &out
	if err := initdb.Run(); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, lastLines(out.String(), 5))
	}
	if p.port, err = freePort(); err != nil {
		return nil, err
	}
	if p.logPath = logPath; logPath == "" {
		p.logPath = filepath.Join(p.base, "postgres.log")
	}
	if p.log, err = os.Create(p.logPath); err != nil {
		return nil, err
	}
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *postgres) dataDir() string { return filepath.Join(p.base, "data") }

func (p *postgres) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(p.bin, name), args...)
	cmd.Dir = p.base
	// The postmaster dies with this process (a test killed on timeout);
	// its backends notice and exit by themselves.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: p.cred}
	return cmd
}

// URL is the owner URL of database db.
func (p *postgres) URL(db string) string {
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Host: "127.0.0.1:" + strconv.Itoa(p.port),
		Path: "/" + db, RawQuery: "sslmode=disable"}).String()
}

// start runs the postmaster and waits until it accepts connections. After
// a kill -9 the old backends may still hold the shared memory for a
// moment; the new postmaster then exits at once and is started again.
func (p *postgres) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		err := p.startOnce(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("postgres: not ready: %w (last: %v; log: %s)", ctx.Err(), err, p.logTail(5))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *postgres) startOnce(ctx context.Context) error {
	// Not CommandContext: the server outlives start's deadline.
	cmd := p.command(context.Background(), "postgres", "-D", p.dataDir(), "-p", strconv.Itoa(p.port), "-k", p.base,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "shared_buffers=64MB",
		// The run crashes the server, not the machine: the page cache
		// survives, so skipping fsync loses nothing here and spares the
		// disk that other work shares.
		"-c", "fsync=off")
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("postgres: start: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(cctx, p.URL("postgres"))
		cancel()
		if err == nil {
			_ = conn.Close(ctx)
			return nil
		}
		select {
		case <-done:
			return errors.New("postgres exited while starting")
		case <-ctx.Done():
			p.kill(syscall.SIGKILL)
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// kill signals the postmaster and waits for it to exit.
func (p *postgres) kill(sig syscall.Signal) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
}

// Stop modes of a PostgreSQL restart, from kindest to harshest.
const (
	pgFast      = "fast"      // SIGINT: roll back, checkpoint, exit
	pgImmediate = "immediate" // SIGQUIT: children killed, crash recovery on start
	pgKill      = "kill -9"   // the postmaster killed; backends left to notice
)

// stop takes the server down in mode.
func (p *postgres) stop(mode string) {
	switch mode {
	case pgFast:
		p.kill(syscall.SIGINT)
	case pgImmediate:
		p.kill(syscall.SIGQUIT)
	default:
		p.kill(syscall.SIGKILL)
	}
}

func (p *postgres) logTail(n int) string {
	b, _ := os.ReadFile(p.logPath)
	return lastLines(string(b), n)
}

// close stops the server at once and removes its files.
func (p *postgres) close() {
	p.kill(syscall.SIGQUIT)
	if p.log != nil {
		_ = p.log.Close()
	}
	if p.base != "" {
		_ = os.RemoveAll(p.base)
	}
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], " | ")
}
