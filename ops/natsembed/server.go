package natsembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Config describes one embedded server. The zero value of every field but
// StoreDir is usable.
type Config struct {
	// Host is the client listen address. Default 127.0.0.1: without a
	// ConfigFile the embedded server has no auth, so it must not listen
	// beyond loopback by accident.
	Host string
	// Port is the client port. -1 or 0 pick a random free port (tests);
	// `oficina dev` uses a fixed port such as 14222. 0 does not mean the
	// NATS default 4222 here, because a system NATS may already hold it.
	Port int
	// StoreDir is where JetStream keeps its files. Required (tests pass
	// t.TempDir()).
	StoreDir string
	// ServerName names the server in logs and in JetStream cluster info.
	// Default: nats-server generates one.
	ServerName string
	// MaxMemory and MaxStore cap JetStream memory and file storage in bytes.
	// 0 lets the server size them from the machine.
	MaxMemory int64
	MaxStore  int64
	// ReadyTimeout bounds how long Start waits for the server to accept
	// clients and serve JetStream. Default 10s.
	ReadyTimeout time.Duration
	// Logger receives the server's log lines. Nil discards them.
	Logger *slog.Logger
	// ConfigFile, when set, is a nats-server configuration file to load
	// first (accounts, users, permissions: ops/natsauth renders one); the
	// fields above override its listen address, port and store.
	ConfigFile string
}

const (
	defaultHost         = "127.0.0.1"
	defaultReadyTimeout = 10 * time.Second
)

func (c Config) withDefaults() Config {
	if c.Host == "" {
		c.Host = defaultHost
	}
	if c.Port == 0 {
		c.Port = server.RANDOM_PORT
	}
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = defaultReadyTimeout
	}
	return c
}

// options translates the config to nats-server options.
func (c Config) options() (*server.Options, error) {
	if c.StoreDir == "" {
		return nil, errors.New("natsembed: StoreDir is required")
	}
	if c.Port < server.RANDOM_PORT || c.Port > 65535 {
		return nil, fmt.Errorf("natsembed: invalid port %d", c.Port)
	}
	o := &server.Options{}
	if c.ConfigFile != "" {
		var err error
		if o, err = server.ProcessConfigFile(c.ConfigFile); err != nil {
			return nil, fmt.Errorf("natsembed: %w", err)
		}
	}
	o.ServerName = c.ServerName
	o.Host, o.Port = c.Host, c.Port
	o.JetStream, o.StoreDir = true, c.StoreDir
	o.JetStreamMaxMemory, o.JetStreamMaxStore = c.MaxMemory, c.MaxStore
	// The host process owns signal handling (oficina dev, go test).
	o.NoSigs, o.NoLog = true, true
	return o, nil
}

// Server is a running embedded nats-server.
type Server struct {
	ns *server.Server
}

// Start starts a server and waits until it accepts clients and JetStream is
// enabled. It returns an error, never panics, if the server cannot start or
// is not ready within cfg.ReadyTimeout or before ctx ends.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	ns, err := launch(ctx, opts, cfg.Logger, cfg.ReadyTimeout)
	if err != nil {
		return nil, err
	}
	return &Server{ns: ns}, nil
}

// launch creates and starts a server from opts and waits for readiness.
// On failure the server is shut down before returning.
func launch(ctx context.Context, opts *server.Options, logger *slog.Logger, timeout time.Duration) (*server.Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("natsembed: start: %w", err)
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsembed: new server: %w", err)
	}
	logs := newLogAdapter(logger)
	ns.SetLoggerV2(logs, false, false, false)

	// Start does not block on listeners, but enabling JetStream may take a
	// while when recovering a large store; run it aside so ctx can abort.
	go ns.Start()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = poll(ctx, func() (bool, error) {
		if err := logs.fatalErr(); err != nil {
			return false, err
		}
		return ns.ReadyForConnections(50*time.Millisecond) && ns.JetStreamEnabled(), nil
	})
	if err != nil {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("natsembed: server %q not ready: %w", opts.ServerName, err)
	}
	return ns, nil
}

// poll calls cond every 25ms until it reports true, fails, or ctx ends.
func poll(ctx context.Context, cond func() (bool, error)) error {
	t := time.NewTicker(25 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// ClientURL is the nats:// URL clients connect to (with the actual port when
// the config asked for a random one).
func (s *Server) ClientURL() string { return s.ns.ClientURL() }

// Name is the server name (generated when Config.ServerName was empty).
func (s *Server) Name() string { return s.ns.Name() }

// Connect opens a client connection to this server.
func (s *Server) Connect(opts ...nats.Option) (*nats.Conn, error) {
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		return nil, fmt.Errorf("natsembed: connect %s: %w", s.ClientURL(), err)
	}
	return nc, nil
}

// Shutdown stops the server and waits until it has released its listeners
// and store. Safe to call more than once.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}
