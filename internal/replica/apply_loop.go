package replica

import (
	"runtime"
	"time"

	"github.com/cairndb/cairn/internal/storage"
)

// applyLoop takes proposals in groups, applies each at the next index, and
// commits the group once with the strongest sync mode any member asked for.
func (l *Local) applyLoop() {
	defer l.wg.Done()
	defer close(l.stopped)
	group := make([]*proposal, 0, l.cfg.MaxGroup)
	for {
		select {
		case p := <-l.proposals:
			group = append(group[:0], p)
		case <-l.closing:
			l.drainClosed()
			return
		}
		group = l.fill(group)
		if len(group) < l.cfg.MaxGroup {
			// Let the goroutines already runnable (the server's workers with
			// the next requests) propose first: one commit carries them too.
			runtime.Gosched()
			group = l.fill(group)
		}
		if l.wait.wants(group) {
			group = l.waitMore(group)
		}
		l.commitGroup(group)
		if l.failed.Load() {
			l.drainClosed()
			return
		}
	}
}

// fill adds the proposals already queued to group, up to MaxGroup.
func (l *Local) fill(group []*proposal) []*proposal {
	for len(group) < l.cfg.MaxGroup {
		select {
		case p := <-l.proposals:
			group = append(group, p)
		default:
			return group
		}
	}
	return group
}

func (l *Local) commitGroup(group []*proposal) {
	b := l.e.NewBatch(l.meta.Origin)
	defer b.Close()
	next := l.applied.Load()
	mode := storage.NoSync
	results := make([]outcome, len(group))
	taken := 0
	for i, p := range group {
		if err := p.ctx.Err(); err != nil {
			results[i] = outcome{err: err} // never applied
			continue
		}
		next++
		results[i] = outcome{res: b.Apply(next, p.cmd)}
		mode = max(mode, p.sync)
		taken++
	}
	if taken > 0 {
		start := time.Now()
		if err := b.Commit(mode); err != nil {
			l.failed.Store(true)
			for _, p := range group {
				p.done <- outcome{err: ErrClosed}
			}
			l.cfg.Fatal(err)
			return
		}
		if mode == storage.Sync {
			// The writers in flight: this group's, and those queued during its commit.
			l.wait.committed(len(group)+len(l.proposals), time.Since(start))
		}
		l.publish(next)
		l.groups.Add(1)
		l.commands.Add(uint64(taken))
	}
	for i, p := range group {
		p.done <- results[i]
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
