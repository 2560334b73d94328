package admin

import (
	"strings"
	"testing"
	"time"
)

// TestMovesLine: show plan sums up a deploy's moves: done/total, bytes,
// rate, and the time left while it runs.
func TestMovesLine(t *testing.T) {
	p := &Plan{Started: time.Now().Add(-10 * time.Second)}
	if got := p.movesLine(); got != "" {
		t.Fatalf("a plan without moves: %q, want nothing", got)
	}
	for i := range 4 {
		st := taskPending
		if i < 2 {
			st = taskSucceeded
		}
		p.Tasks = append(p.Tasks, &Task{Kind: "move-partitions", State: st, Args: map[string]string{"bytes": "5000000", "moves": "1:1:2"}})
	}
	got := p.movesLine()
	for _, want := range []string{"2/4 partitions moved", "10.0 MB copied", "0.20 partitions/s", "1.0 MB/s", "about 10s left"} {
		if !strings.Contains(got, want) {
			t.Errorf("movesLine = %q, want it to say %q", got, want)
		}
	}
	p.Ended = p.Started.Add(20 * time.Second)
	if got := p.movesLine(); strings.Contains(got, "left") {
		t.Errorf("an ended plan: %q says time is left", got)
	}
}
