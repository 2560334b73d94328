package replica

import (
	"runtime"
	"time"

	"github.com/cairndb/cairn/internal/storage"
)

// applyLoop takes proposals in groups, applies each at the next index as
// it is taken, and commits the group once with the strongest sync mode any
// member asked for.
func (l *Local) applyLoop() {
	defer l.wg.Done()
	defer close(l.stopped)
	g := &group{members: make([]*proposal, 0, l.cfg.MaxGroup), results: make([]outcome, 0, l.cfg.MaxGroup)}
	for {
		select {
		case p := <-l.proposals:
			l.open(g)
			g.add(p)
		case <-l.closing:
			l.drainClosed()
			return
		}
		l.fill(g)
		if len(g.members) < l.cfg.MaxGroup {
			// Let the goroutines already runnable (the server's workers with
			// the next requests) propose first: one commit carries them too.
			runtime.Gosched()
			l.fill(g)
		}
		if l.wait.wants(len(g.members), g.mode) {
			g.ranOut = l.waitMore(g)
		}
		l.commit(g)
		if l.failed.Load() {
			l.drainClosed()
			return
		}
	}
}

// group is the batch the apply loop fills. Each proposal is applied when
// it is taken, so a group that waits for more writers (group_wait.go) has
// done its members' work by the time the last one arrives.
type group struct {
	b       *storage.Batch
	members []*proposal
	results []outcome
	next    uint64 // the index of the last proposal applied
	mode    storage.SyncMode
	taken   int  // members applied (the others' contexts had ended)
	ranOut  bool // the group's wait for more writers ran out (group_wait.go)
}

// open starts an empty group after the applied index.
func (l *Local) open(g *group) {
	g.b = l.e.NewBatch(l.meta.Origin)
	g.members, g.results = g.members[:0], g.results[:0]
	g.next, g.mode, g.taken, g.ranOut = l.applied.Load(), storage.NoSync, 0, false
}

// add applies p at the next index, unless its context has ended: then it
// is never applied.
func (g *group) add(p *proposal) {
	g.members = append(g.members, p)
	if err := p.ctx.Err(); err != nil {
		g.results = append(g.results, outcome{err: err})
		return
	}
	g.next++
	g.results = append(g.results, outcome{res: g.b.Apply(g.next, p.cmd)})
	g.mode = max(g.mode, p.sync)
	g.taken++
}

// fill adds the proposals already queued to g, up to MaxGroup.
func (l *Local) fill(g *group) {
	for len(g.members) < l.cfg.MaxGroup {
		select {
		case p := <-l.proposals:
			g.add(p)
		default:
			return
		}
	}
}

// commit commits g's batch and answers its members.
func (l *Local) commit(g *group) {
	defer g.b.Close()
	if g.taken > 0 {
		start := time.Now()
		if err := g.b.Commit(g.mode); err != nil {
			l.failed.Store(true)
			for _, p := range g.members {
				p.done <- outcome{err: ErrClosed}
			}
			l.cfg.Fatal(err)
			return
		}
		if g.mode == storage.Sync {
			// The writers in flight: this group's, and those queued during its commit.
			l.wait.committed(len(g.members)+len(l.proposals), time.Since(start), g.ranOut)
		}
		l.publish(g.next)
		l.groups.Add(1)
		l.commands.Add(uint64(g.taken))
	}
	for i, p := range g.members {
		p.done <- g.results[i]
	}
}

// drainClosed fails the proposals still queued; none of them was applied.
func (l *Local) drainClosed() {
	for {
		select {
		case p := <-l.proposals:
			p.done <- outcome{err: ErrClosed}
		default:
			return
		}
	}
}

func (l *Local) publish(idx uint64) {
	l.applied.Store(idx)
	l.mu.Lock()
	close(l.advanced)
	l.advanced = make(chan struct{})
	l.mu.Unlock()
}

// waitChan returns a channel closed after the applied index next grows.
func (l *Local) waitChan() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.advanced
}
