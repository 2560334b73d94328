package admin

import (
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// TestStuckFollowers: the leader's stuck followers and those far ahead of
// it are stuck; one on a node short of disk, or waiting to be readmitted,
// is left to the checks that fit it; without a leader nothing is.
func TestStuckFollowers(t *testing.T) {
	sh := topology.Shard{ID: 1, Replicas: []topology.NodeID{1, 2, 3, 4, 5, 6}}
	info := func(st *controlpb.ShardState, storage string) *controlpb.NodeInfo {
		st.Shard, st.Running = 1, true
		return &controlpb.NodeInfo{Shards: []*controlpb.ShardState{st}, Storage: &controlpb.StorageInfo{State: storage}}
	}
	infos := map[uint64]*controlpb.NodeInfo{
		1: info(&controlpb.ShardState{IsLeader: true, Applied: 100, Stuck: map[uint64]string{2: "it answers", 3: "it answers", 4: "it answers"}}, "ok"),
		2: info(&controlpb.ShardState{Applied: 90}, "ok"),
		3: info(&controlpb.ShardState{Applied: 90}, "low-disk"),
		4: info(&controlpb.ShardState{Rejoining: true}, "ok"),
		5: info(&controlpb.ShardState{Applied: 100 + 1<<40}, "ok"),
		6: info(&controlpb.ShardState{Applied: 20, Stuck: map[uint64]string{6: "its leader remembers"}}, "ok"),
	}
	got := stuckFollowers(sh, infos)
	if len(got) != 3 || got[2] != "it answers" || !strings.Contains(got[5], "far beyond its leader's 100") || got[6] != "its leader remembers" {
		t.Fatalf("stuck followers: %v, want sn2 (as its leader says), sn5 (far ahead) and sn6 (as it says)", got)
	}
	infos[1].Shards[0].IsLeader = false
	if got := stuckFollowers(sh, infos); len(got) != 0 {
		t.Fatalf("without a leader: %v, want none", got)
	}
}
