package testkit

import (
	"net"
	"sync"
	"testing"
)

// Proxy is a TCP forwarder to a dependency (PostgreSQL, NATS) that a test
// can take away without touching the shared server: Cut closes every
// connection and refuses new ones (a server that is down), Pause keeps the
// connections open but forwards nothing (a server, or a network, that
// stopped answering), Restore undoes either.
type Proxy struct {
	target string
	addr   string

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	paused chan struct{} // closed while forwarding
}

// NewProxy forwards a fresh loopback port to target (host:port) until the
// test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: proxy: %v", err)
	}
	p := &Proxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}, paused: make(chan struct{})}
	close(p.paused)
	p.serve(ln)
	t.Cleanup(func() {
		p.Cut()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

func (p *Proxy) serve(ln net.Listener) {
	p.ln = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *Proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	go p.pipe(up, c)
	p.pipe(c, up)
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil { // cut meanwhile
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

// pipe copies from src to dst, holding what it read while paused.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.paused
			p.mu.Unlock()
			<-gate
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Cut closes every connection and the listener: connecting is refused
// until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
	p.release()
}

// Pause stops forwarding: connections stay open, nothing reaches either
// side, so every request waits for its own deadline.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.paused:
		p.paused = make(chan struct{})
	default:
	}
}

// Restore forwards again and, after Cut, listens again on the same port.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.release()
	if p.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.serve(ln)
	return nil
}

func (p *Proxy) release() {
	select {
	case <-p.paused:
	default:
		close(p.paused)
	}
}
