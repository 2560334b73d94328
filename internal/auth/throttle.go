package auth

import (
	"sync"
	"time"
)

// Throttle slows down repeated failed logins, per user and per source
// address: after FreeFailures failures within Window, each further attempt
// from that user or address waits 2^k × BaseDelay (k: failures beyond the
// free ones), capped at MaxDelay, before its answer. A success clears the
// user's and the address's counts. Safe for concurrent use.
type Throttle struct {
	FreeFailures int
	Window       time.Duration
	BaseDelay    time.Duration
	MaxDelay     time.Duration

	mu    sync.Mutex
	fails map[string]*failures
}

type failures struct {
	n     int
	first time.Time
}

// NewThrottle returns the defaults: 5 free failures a minute, then 100 ms
// doubling to at most 10 s.
func NewThrottle() *Throttle {
	return &Throttle{FreeFailures: 5, Window: time.Minute, BaseDelay: 100 * time.Millisecond, MaxDelay: 10 * time.Second}
}

// Delay is how long an attempt by user from addr must wait at now.
func (t *Throttle) Delay(user, addr string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return max(t.delayLocked("u:"+user, now), t.delayLocked("a:"+addr, now))
}

func (t *Throttle) delayLocked(k string, now time.Time) time.Duration {
	f := t.fails[k]
	if f == nil || now.Sub(f.first) > t.Window {
		return 0
	}
	over := f.n - t.FreeFailures
	if over < 0 {
		return 0
	}
	d := t.BaseDelay << min(over, 30)
	return min(d, t.MaxDelay)
}

// Failed records a failed attempt.
func (t *Throttle) Failed(user, addr string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fails == nil {
		t.fails = map[string]*failures{}
	}
	for _, k := range []string{"u:" + user, "a:" + addr} {
		f := t.fails[k]
		if f == nil || now.Sub(f.first) > t.Window {
			f = &failures{first: now}
			t.fails[k] = f
		}
		f.n++
	}
	if len(t.fails) > 100000 { // bound memory under a spray of names
		for k, f := range t.fails {
			if now.Sub(f.first) > t.Window {
				delete(t.fails, k)
			}
		}
	}
}

// Succeeded clears user's and addr's failures.
func (t *Throttle) Succeeded(user, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.fails, "u:"+user)
	delete(t.fails, "a:"+addr)
}
