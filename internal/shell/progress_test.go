package shell

import (
	"bytes"
	"testing"
)

// TestProgressOf: -wait's line is the plan's Moves line, else its running
// task's progress, else nothing.
func TestProgressOf(t *testing.T) {
	for text, want := range map[string]string{
		"Plan 10 [deploy-topology -name G]\nState:   RUNNING\nMoves:   3/50 partitions moved, 0.7 MB copied\nTasks:\n  3 RUNNING   move\n     progress: 25 copy; 0.1 MB": "moves: 3/50 partitions moved, 0.7 MB copied",
		"Plan 4 [verify-data]\nTasks:\n  1 RUNNING   read blocks\n     progress: sn1: 3 of 9 files":                                                                      "sn1: 3 of 9 files",
		"Plan 2 [deploy-sn]\nTasks:\n  1 PENDING   deploy":                                                                                                               "",
	} {
		if got := progressOf(text); got != want {
			t.Errorf("progressOf(%q) = %q, want %q", text, got, want)
		}
	}
	var b bytes.Buffer
	s := &Shell{Progress: &b}
	s.progressLine("moves: 1/2")
	s.progressLine("")
	if got, want := b.String(), "\r\x1b[Kmoves: 1/2\r\x1b[K"; got != want {
		t.Errorf("progress output %q, want %q", got, want)
	}
	(&Shell{}).progressLine("ignored") // no terminal: nothing, no panic
}
