package node

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPausePoint checks the pause failpoint's list: the phases it pauses
// at, skip=N (the N+1th arrival pauses), once per process, and once=FILE
// (a second process sharing FILE does not pause).
func TestPausePoint(t *testing.T) {
	const env = "CAIRN_FAILPOINT_TEST_PAUSE"
	once := filepath.Join(t.TempDir(), "paused")
	t.Setenv(env, "learner=20ms,skip=1,once="+once)
	log := slog.New(slog.DiscardHandler)
	p, other := newPausePoint(env, "test", log), newPausePoint(env, "test", log)
	if newPausePoint(env+"_UNSET", "test", log) != nil {
		t.Fatal("an unset failpoint is not nil")
	}
	paused := func(p *pausePoint, phase string) bool {
		start := time.Now()
		if err := p.pause(context.Background(), phase); err != nil {
			t.Fatal(err)
		}
		return time.Since(start) >= 20*time.Millisecond
	}
	for i, want := range []bool{false, true, false, false} {
		if got := paused(p, "learner"); got != want {
			t.Fatalf("arrival %d at learner: paused %v, want %v", i, got, want)
		}
	}
	if paused(p, "voter") {
		t.Fatal("paused at a phase the failpoint does not list")
	}
	if _, err := os.Stat(once); err != nil {
		t.Fatalf("the pause did not create its once file: %v", err)
	}
	for i := range 3 {
		if paused(other, "learner") {
			t.Fatalf("a second process paused (arrival %d) although the once file existed", i)
		}
	}
	var logged bytes.Buffer
	t.Setenv(env, "voter=3x,skip=two,learner=1ms")
	bad := newPausePoint(env, "test", slog.New(slog.NewTextHandler(&logged, nil)))
	if _, ok := bad.pauses["voter"]; ok || bad.skip != 0 || bad.pauses["learner"] != time.Millisecond {
		t.Fatalf("malformed items were taken: pauses %v, skip %d", bad.pauses, bad.skip)
	}
	if got := strings.Count(logged.String(), "malformed item"); got != 2 {
		t.Fatalf("logged %d warnings for 2 malformed items:\n%s", got, logged.String())
	}
	var none *pausePoint
	if err := none.pause(context.Background(), "learner"); err != nil {
		t.Fatal(err)
	}
}
