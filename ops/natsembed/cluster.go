package natsembed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// clusterName is the route cluster name shared by all nodes of a Cluster.
const clusterName = "oficina"

// Cluster is a JetStream cluster of embedded servers on loopback, for fault
// tests: nodes can be stopped and restarted with their ports and stores.
type Cluster struct {
	mu    sync.Mutex
	nodes []*node
}

// node keeps what a restart needs: the same ports (so routes and clients
// find it again) and the same store (so it rejoins as the same peer).
type node struct {
	name        string
	storeDir    string
	clientPort  int
	clusterPort int
	ns          *server.Server // nil while stopped
}

// StartCluster starts n servers (n >= 1, typically 3) with JetStream on
// 127.0.0.1, each storing under baseDir/<name>, fully routed to each other,
// and waits until the JetStream meta group has a leader and every node is
// current.
func StartCluster(ctx context.Context, n int, baseDir string) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("natsembed: cluster size %d < 1", n)
	}
	if baseDir == "" {
		return nil, errors.New("natsembed: cluster baseDir is required")
	}
	// Every node gets explicit routes to all nodes, so a restarted node is
	// re-dialled by its peers and dials them; that needs every port up front.
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	c := &Cluster{nodes: make([]*node, n)}
	for i := range c.nodes {
		name := "n" + strconv.Itoa(i)
		c.nodes[i] = &node{
			name:        name,
			storeDir:    filepath.Join(baseDir, name),
			clientPort:  ports[2*i],
			clusterPort: ports[2*i+1],
		}
	}
	for i := range c.nodes {
		if err := c.startNode(ctx, i); err != nil {
			c.Shutdown()
			return nil, err
		}
	}
	if err := c.waitJetStream(ctx); err != nil {
		c.Shutdown()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) routes() []*url.URL {
	urls := make([]*url.URL, len(c.nodes))
	for i, nd := range c.nodes {
		urls[i] = &url.URL{Scheme: "nats", Host: net.JoinHostPort(defaultHost, strconv.Itoa(nd.clusterPort))}
	}
	return urls
}

// startNode starts node i and records it as running.
func (c *Cluster) startNode(ctx context.Context, i int) error {
	nd := c.nodes[i]
	cfg := Config{Port: nd.clientPort, StoreDir: nd.storeDir, ServerName: nd.name}.withDefaults()
	opts, err := cfg.options()
	if err != nil {
		return err
	}
	opts.Cluster.Name = clusterName
	opts.Cluster.Host = defaultHost
	opts.Cluster.Port = nd.clusterPort
	opts.Routes = c.routes()
	ns, err := launch(ctx, opts, nil, cfg.ReadyTimeout)
	if err != nil {
		return err
	}
	c.mu.Lock()
	nd.ns = ns
	c.mu.Unlock()
	return nil
}

// waitJetStream waits until the meta group has a leader and every running
// node is current with it; before that, stream creation may fail.
func (c *Cluster) waitJetStream(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, defaultReadyTimeout)
	defer cancel()
	err := poll(ctx, func() (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		leader := false
		for _, nd := range c.nodes {
			if nd.ns == nil {
				continue
			}
			if !nd.ns.JetStreamIsCurrent() {
				return false, nil
			}
			leader = leader || nd.ns.JetStreamIsLeader()
		}
		return leader, nil
	})
	if err != nil {
		return fmt.Errorf("natsembed: cluster JetStream not ready: %w", err)
	}
	return nil
}

// ClientURLs lists the client URLs of all nodes, stopped ones included, so
// a client given them fails over as nodes stop and come back.
func (c *Cluster) ClientURLs() []string {
	urls := make([]string, len(c.nodes))
	for i, nd := range c.nodes {
		urls[i] = "nats://" + net.JoinHostPort(defaultHost, strconv.Itoa(nd.clientPort))
	}
	return urls
}

// Connect opens a client connection that may use any node.
func (c *Cluster) Connect(opts ...nats.Option) (*nats.Conn, error) {
	urls := strings.Join(c.ClientURLs(), ",")
	nc, err := nats.Connect(urls, opts...)
	if err != nil {
		return nil, fmt.Errorf("natsembed: connect %s: %w", urls, err)
	}
	return nc, nil
}

// NodeName is the server name of node i ("n0", "n1", …), as JetStream
// reports it in stream and consumer cluster info.
func (c *Cluster) NodeName(i int) string { return c.nodes[i].name }

// NodeIndex maps a server name back to its node index, or -1.
func (c *Cluster) NodeIndex(name string) int {
	for i, nd := range c.nodes {
		if nd.name == name {
			return i
		}
	}
	return -1
}

// Stop shuts node i down and waits until it is gone. Stopping a stopped node
// does nothing.
func (c *Cluster) Stop(i int) error {
	if i < 0 || i >= len(c.nodes) {
		return fmt.Errorf("natsembed: no node %d", i)
	}
	c.mu.Lock()
	ns := c.nodes[i].ns
	c.nodes[i].ns = nil
	c.mu.Unlock()
	if ns != nil {
		ns.Shutdown()
		ns.WaitForShutdown()
	}
	return nil
}

// Restart starts a stopped node i again on its old ports and store, and
// waits until JetStream is current on all running nodes.
func (c *Cluster) Restart(ctx context.Context, i int) error {
	if i < 0 || i >= len(c.nodes) {
		return fmt.Errorf("natsembed: no node %d", i)
	}
	c.mu.Lock()
	running := c.nodes[i].ns != nil
	c.mu.Unlock()
	if running {
		return fmt.Errorf("natsembed: node %d is running", i)
	}
	if err := c.startNode(ctx, i); err != nil {
		return err
	}
	return c.waitJetStream(ctx)
}

// Shutdown stops every node.
func (c *Cluster) Shutdown() {
	var wg sync.WaitGroup
	for i := range c.nodes {
		wg.Go(func() { _ = c.Stop(i) })
	}
	wg.Wait()
}

// freePorts returns n distinct free TCP ports on loopback. They are released
// before use, so another process could take one in between; on a test
// machine that race is rare enough, and launch reports it as an error.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(defaultHost, "0"))
		if err != nil {
			return nil, fmt.Errorf("natsembed: reserve port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
