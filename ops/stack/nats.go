package stack

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/config"
	"oficina/ops/natsauth"
	"oficina/ops/natsconn"
	"oficina/ops/natsembed"
	"oficina/streams/jsconfig"
)

// NATSAuthDir is where `oficina dev` keeps the NKey seeds of its embedded
// NATS users and the server configuration made from them.
func NATSAuthDir(dataDir string) string { return filepath.Join(dataDir, "nats-auth") }

// startEmbeddedNATS is dev's NATS: the users and permissions of
// docs/nats/oficina.conf with seeds generated into <data-dir>/nats-auth
// (0600), so nothing on the machine reaches it without one. The API side
// connects as the api user, the in-process dispatcher as dispatch.
func (s *Stack) startEmbeddedNATS(ctx context.Context, cfg *config.Config) error {
	dir := NATSAuthDir(cfg.DataDir)
	if _, err := natsauth.LoadOrGenerate(dir); err != nil {
		return fmt.Errorf("stack: embedded nats users: %w", err)
	}
	store := filepath.Join(cfg.DataDir, "nats")
	ns, err := natsembed.Start(ctx, natsembed.Config{Port: cfg.NATSPort, StoreDir: store, ConfigFile: natsauth.ConfigFile(dir)})
	if err != nil {
		return fmt.Errorf("stack: embedded nats: %w", err)
	}
	s.nats = ns
	cfg.NATSURL = ns.ClientURL()
	cfg.NATS = config.NATS{NKeyFile: natsauth.SeedFile(dir, natsauth.API)}
	s.dispatchNATS = &config.NATS{NKeyFile: natsauth.SeedFile(dir, natsauth.Dispatch)}
	s.embedded = &embeddedNATS{url: cfg.NATSURL, store: store, seeds: dir}
	return nil
}

// embeddedNATS is where dev's NATS is, for the start-up banner.
type embeddedNATS struct{ url, store, seeds string }

// print writes how to reach dev's NATS with its users' seeds; company
// fills the commands that take one ("" when dev made no demo company).
func (e *embeddedNATS) print(w io.Writer, company string) {
	consumer, admin := natsauth.SeedFile(e.seeds, natsauth.Consumer), natsauth.SeedFile(e.seeds, natsauth.Admin)
	subject, id := "oficina.events.>", "<company id>"
	if company != "" {
		subject, id = "oficina.events."+company+".>", company
	}
	fmt.Fprintf(w, "\nembedded NATS %s (JetStream store %s); its users' NKey seeds are in %s (0600):\n"+
		"  nats -s %s --nkey %s --inbox-prefix %s sub '%s'\n"+
		"  nats -s %s --nkey %s stream ls\n"+
		"  oficina events tail --company %s    (uses %s by itself; make build puts oficina in ./bin)\n",
		e.url, e.store, e.seeds, e.url, consumer, natsauth.Inbox(natsauth.Consumer), subject, e.url, admin, id, consumer)
}

// connectNATS connects as role with the configured identity and TLS,
// reconnecting forever.
func (s *Stack) connectNATS(url string, c config.NATS, role string) (*nats.Conn, error) {
	return natsconn.Connect(url, c, role, s.log, nats.MaxReconnects(-1))
}

// awaitStreams waits until serve has created the streams a relay or a
// dispatcher uses: their NATS users may read the streams, not create or
// change them (docs/security.md, "NATS").
func (s *Stack) awaitStreams(ctx context.Context, js jetstream.JetStream, names ...string) error {
	return jsconfig.Await(ctx, js, func(name string, err error) {
		s.log.Warn("waiting for a JetStream stream (oficina serve creates it)", "stream", name, "err", err)
	}, names...)
}
