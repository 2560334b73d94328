package clustertest

import (
	"io"
	"net"
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/topology"
)

// proxyDialTimeout bounds the proxy's connect to its target.
const proxyDialTimeout = time.Second

// Proxy forwards TCP connections from one node to another's address. It
// carries the Raft traffic From sends To. While cut it closes every
// connection it has and every new one at once.
type Proxy struct {
	From, To topology.NodeID
	lis      net.Listener
	target   string

	mu     sync.Mutex
	cut    bool
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewProxy listens on a free 127.0.0.1 port and forwards to target.
func NewProxy(from, to topology.NodeID, target string) (*Proxy, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{From: from, To: to, lis: lis, target: target, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the address the From node dials.
func (p *Proxy) Addr() string { return p.lis.Addr().String() }

// Cut closes the proxy's connections and refuses new ones until Heal.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.closeAllLocked()
}

// Heal lets connections through again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// IsCut reports whether the link is cut.
func (p *Proxy) IsCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}

// Close stops the proxy and waits for its goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.closeAllLocked()
	p.mu.Unlock()
	p.lis.Close()
	p.wg.Wait()
}

func (p *Proxy) closeAllLocked() {
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// track registers c unless the link is cut or closed; then it closes c.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		down, err := p.lis.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(down) {
			continue
		}
		p.wg.Add(1)
		go p.forward(down)
	}
}

// forward connects to the target and copies both ways until either side
// ends or the link is cut.
func (p *Proxy) forward(down net.Conn) {
	defer p.wg.Done()
	up, err := net.DialTimeout("tcp", p.target, proxyDialTimeout)
	if err != nil {
		p.untrack(down)
		return
	}
	if !p.track(up) { // cut while dialing
		p.untrack(down)
		return
	}
	var once sync.Once
	done := func() { once.Do(func() { p.untrack(down, up) }) }
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_, _ = io.Copy(up, down)
		done()
	}()
	_, _ = io.Copy(down, up)
	done()
}
