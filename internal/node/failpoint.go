package node

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Pause failpoints let a fault test strike while a long operation waits at
// a known phase. Each is an environment variable holding a list:
//
//	CAIRN_FAILPOINT_MOVE_PAUSE=copy=3s,activate=3s,skip=1,once=/tmp/x/paused
//	                           ^phase=pause        ^optional
//
// A process pauses at each listed phase once: the first time it gets
// there, or with skip=N the (N+1)th. With once=FILE, a pause
// happens only if this process creates FILE (it must not exist yet), so
// that of all the nodes sharing FILE only the first to reach any listed
// phase pauses, once in the whole store. The node logs "failpoint: <what>
// paused" with the phase (and the caller's attributes) as the pause
// begins. Unset, a failpoint is nil and costs nothing.

// pausePoint is one parsed pause failpoint.
type pausePoint struct {
	what   string // "move", "replica change": names the pause in the log
	pauses map[string]time.Duration
	once   string
	skip   int
	log    *slog.Logger

	mu      sync.Mutex
	arrived map[string]int // per phase, the times this process got there
}

// newPausePoint parses the failpoint in env, or returns nil if it is unset.
func newPausePoint(env, what string, log *slog.Logger) *pausePoint {
	spec := os.Getenv(env)
	if spec == "" {
		return nil
	}
	p := &pausePoint{what: what, pauses: map[string]time.Duration{}, log: log, arrived: map[string]int{}}
	for _, f := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(f, "=")
		var err error
		switch k {
		case "once":
			p.once = v
		case "skip":
			p.skip, err = strconv.Atoi(v)
		default:
			p.pauses[k], err = time.ParseDuration(v)
		}
		if err != nil {
			delete(p.pauses, k)
			log.Warn("failpoint: ignoring a malformed item (want phase=DURATION, skip=N or once=FILE)", "env", env, "item", f, "err", err)
		}
	}
	return p
}

// pause waits at phase if the failpoint lists it and this is its first
// time there (see above). attrs are logged with the pause.
func (p *pausePoint) pause(ctx context.Context, phase string, attrs ...any) error {
	if p == nil {
		return nil
	}
	d, ok := p.pauses[phase]
	if !ok {
		return nil
	}
	p.mu.Lock()
	n := p.arrived[phase]
	p.arrived[phase]++
	p.mu.Unlock()
	if n != p.skip {
		return nil
	}
	if p.once != "" {
		f, err := os.OpenFile(p.once, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return nil // another node paused, or the file is unusable: no pause
		}
		f.Close()
	}
	p.log.Warn("failpoint: "+p.what+" paused", append([]any{"phase", phase}, append(attrs, "for", d)...)...)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
