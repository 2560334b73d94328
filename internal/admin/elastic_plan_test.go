package admin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/topology"
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

// A round of moves is followed by a pause that gives the plan its move
// share of the time, except the last round.
func TestPauseAfterRound(t *testing.T) {
	first := newTask("move-partitions", "round 1", map[string]string{"move_share": "25"})
	last := newTask("move-partitions", "round 2", map[string]string{})
	p := &Plan{Tasks: []*Task{first, last, newTask("publish-topology", "final", nil)}}
	start := time.Now()
	if err := pauseAfterRound(context.Background(), p, first, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 60*time.Millisecond {
		t.Errorf("a 20 ms round at a 25 %% share paused %v, want at least 60 ms", took)
	}
	start = time.Now()
	if err := pauseAfterRound(context.Background(), p, last, time.Hour); err != nil || time.Since(start) > time.Second {
		t.Errorf("the last round paused %v (err %v), want no pause", time.Since(start), err)
	}
	first.Args["move_share"] = "0"
	if err := pauseAfterRound(context.Background(), p, first, time.Millisecond); err == nil {
		t.Error("a move share of 0 was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	first.Args["move_share"] = "1"
	if err := pauseAfterRound(ctx, p, first, time.Hour); err == nil {
		t.Error("a cancelled plan's pause did not end with its context")
	}
}

// TestNewShardsText: the publish-topology shards task names the new shards,
// or the new nodes when there are no new shards (never "no shards").
func TestNewShardsText(t *testing.T) {
	for _, tc := range []struct {
		ch   topology.Changes
		want string
	}{
		{topology.Changes{NewShards: []topology.Shard{{ID: 3}, {ID: 4}}, NewNodes: []topology.NodeID{4}},
			"create the new shards rg3, rg4 (empty) and publish the topology"},
		{topology.Changes{NewShards: []topology.Shard{{ID: 3}}}, "create the new shard rg3 (empty) and publish the topology"},
		{topology.Changes{NewNodes: []topology.NodeID{4, 5}}, "add the new storage nodes sn4, sn5 to the topology, hosting nothing yet, and publish it"},
		{topology.Changes{NewNodes: []topology.NodeID{4}}, "add the new storage node sn4 to the topology, hosting nothing yet, and publish it"},
	} {
		if got := newShardsText(tc.ch); got != tc.want {
			t.Errorf("newShardsText(%+v) = %q, want %q", tc.ch, got, tc.want)
		}
	}
}
