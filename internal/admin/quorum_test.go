package admin

import (
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// running describes a node whose replicas of the given shards run.
func running(sn uint64, shards ...uint64) *controlpb.NodeInfo {
	info := &controlpb.NodeInfo{SnId: sn}
	for _, s := range shards {
		info.Shards = append(info.Shards, &controlpb.ShardState{Shard: s, Running: true})
	}
	return info
}

func TestCheckMajority(t *testing.T) {
	rf3 := topology.Shard{ID: 1, Replicas: []topology.NodeID{1, 2, 3}}
	rf1 := topology.Shard{ID: 1, Replicas: []topology.NodeID{1}}
	all := map[uint64]*controlpb.NodeInfo{1: running(1, 1), 2: running(2, 1), 3: running(3, 1)}
	noSN3 := map[uint64]*controlpb.NodeInfo{1: running(1, 1), 2: running(2, 1)}
	sn3Idle := map[uint64]*controlpb.NodeInfo{1: running(1, 1), 2: running(2, 1), 3: {SnId: 3, Shards: []*controlpb.ShardState{{Shard: 1}}}}
	stopPlan := &Plan{ID: 7, Name: "stop-service", State: Running, Args: map[string]string{"service": "rg1-rn3"}}
	for _, tc := range []struct {
		name    string
		sh      topology.Shard
		stop    uint64
		stopped []string
		plans   []*Plan
		infos   map[uint64]*controlpb.NodeInfo
		before  int
		want    []string // substrings of the error; nil: allowed
	}{
		{name: "all running: one may stop", sh: rf3, stop: 2, infos: all, before: 9},
		{name: "another stopped by plan", sh: rf3, stop: 2, stopped: []string{"rg1-rn3"}, infos: all, before: 9,
			want: []string{"stopping rg1-rn2 would leave shard rg1 with 1 of its 3 replicas running, fewer than the 2",
				"rg1-rn3 (stopped by plan stop-service)", "plan start-service -service rg1-rn3 -wait", "add -force"}},
		{name: "another's node does not answer", sh: rf3, stop: 1, infos: noSN3, before: 9,
			want: []string{"rg1-rn3 (its node sn3 does not answer)", "start sn3 with cairn sn start"}},
		{name: "another not running on its node", sh: rf3, stop: 1, infos: sn3Idle, before: 9,
			want: []string{"rg1-rn3 (not running on sn3)"}},
		{name: "an earlier running plan stops another", sh: rf3, stop: 2, plans: []*Plan{stopPlan}, infos: all, before: 9,
			want: []string{"rg1-rn3 (plan 7, which runs first, stops it)", "plan interrupt -id 7"}},
		{name: "a later plan does not count", sh: rf3, stop: 2, plans: []*Plan{stopPlan}, infos: all, before: 7},
		{name: "the target is already down", sh: rf3, stop: 3, stopped: []string{"rg1-rn3"}, infos: noSN3, before: 9},
		{name: "the target's node does not answer", sh: rf3, stop: 3, infos: noSN3, before: 9},
		{name: "the only replica", sh: rf1, stop: 1, infos: all, before: 9,
			want: []string{"0 of its 1 replicas running", "Add -force to stop rg1-rn1 anyway"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Meta{Stopped: tc.stopped, Plans: tc.plans}
			err := checkMajority(m, tc.sh, tc.stop, tc.infos, tc.before)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if status.Code(err) != codes.FailedPrecondition {
				t.Fatalf("got %v, want a FailedPrecondition error (a refusal: exit 1)", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
