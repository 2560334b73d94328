package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// nodeReport is what a storage node's Describe says about its replicas:
// shard id -> "leader", "follower" or "stopped".
type nodeReport map[uint64]string

// threeNodeMeta is a store of two shards of three replicas on sn1-sn3 whose
// nodes answered as reports says (a missing node does not answer).
func threeNodeMeta(reports map[uint64]nodeReport) (*Meta, map[uint64]*controlpb.NodeInfo) {
	m := &Meta{Store: "kvstore", Deployed: &topology.Topology{Store: "kvstore", Partitions: 2, Seq: 1, PartitionShard: []topology.ShardID{1, 2}}}
	for id := uint64(1); id <= 3; id++ {
		m.SNs = append(m.SNs, SN{ID: id, Host: "127.0.0.1", Port: 5000 + int(id)})
		m.Deployed.Nodes = append(m.Deployed.Nodes, topology.Node{ID: topology.NodeID(id), Addr: m.SNs[id-1].Addr()})
	}
	for sh := topology.ShardID(1); sh <= 2; sh++ {
		m.Deployed.Shards = append(m.Deployed.Shards, topology.Shard{ID: sh, Replicas: []topology.NodeID{1, 2, 3}, Preferred: topology.NodeID(sh)})
	}
	infos := map[uint64]*controlpb.NodeInfo{}
	for id, rep := range reports {
		info := &controlpb.NodeInfo{Store: "kvstore", SnId: id}
		for shard, state := range rep {
			info.Shards = append(info.Shards, &controlpb.ShardState{Shard: shard, Running: state != "stopped", IsLeader: state == "leader"})
		}
		infos[id] = info
	}
	return m, infos
}

func TestVerifyNoLeaderAdvice(t *testing.T) {
	up := nodeReport{1: "follower", 2: "follower"}
	for _, tc := range []struct {
		name     string
		reports  map[uint64]nodeReport
		stopped  []string
		want     []string // in rg1's no-leader violation
		dontWant []string
	}{
		{"every node answers, election under way (full restart)",
			map[uint64]nodeReport{1: up, 2: up, 3: up},
			nil,
			[]string{"no replica of rg1 leads yet", "3 of its 3 replicas run", "an election is in progress", "run verify configuration again in a few seconds"},
			[]string{"unreachable", "does not answer", "do not answer"}},
		{"one node down, election under way",
			map[uint64]nodeReport{1: up, 2: up},
			nil,
			[]string{"an election is in progress", "sn3 does not answer"},
			nil},
		{"two nodes down",
			map[uint64]nodeReport{1: up},
			nil,
			[]string{"rg1 has no leader that can take writes: only 1 of its 3 replicas run, and a majority (2) must", "sn2, sn3 do not answer: start them"},
			[]string{"election"}},
		{"two replicas stopped, a lone replica still calls itself leader",
			map[uint64]nodeReport{1: {1: "leader", 2: "leader"}, 2: {1: "stopped", 2: "follower"}, 3: {1: "stopped", 2: "follower"}},
			[]string{"rg1-rn2", "rg1-rn3"},
			[]string{"only 1 of its 3 replicas run", "rg1-rn2 is stopped: plan start-service -service rg1-rn2 -wait", "rg1-rn3 is stopped"},
			[]string{"election", "answer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, infos := threeNodeMeta(tc.reports)
			m.Stopped = tc.stopped
			var v verification
			(&Service{}).verifyShards(m, infos, &v)
			var got string
			for _, f := range v.Violations {
				if f.Rule == "no-leader" && f.Subject == "rg1" {
					got = f.Message
				}
			}
			if got == "" {
				t.Fatalf("no no-leader violation for rg1 in %v", v.Violations)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("advice %q lacks %q", got, w)
				}
			}
			for _, w := range tc.dontWant {
				if strings.Contains(got, w) {
					t.Errorf("advice %q has %q", got, w)
				}
			}
		})
	}
}

func TestVerifyLedShardsPass(t *testing.T) {
	m, infos := threeNodeMeta(map[uint64]nodeReport{1: {1: "leader", 2: "follower"}, 2: {1: "follower", 2: "leader"}, 3: {1: "follower", 2: "follower"}})
	var v verification
	(&Service{}).verifyShards(m, infos, &v)
	if len(v.Violations)+len(v.Warnings) != 0 {
		t.Errorf("findings for a healthy store: %v %v", v.Violations, v.Warnings)
	}
}

// TestVerifyJSON: lower_snake_case keys, and [] for no findings.
func TestVerifyJSON(t *testing.T) {
	var v verification
	b, _ := json.Marshal(v.report())
	if string(b) != `{"violations":[],"warnings":[]}` {
		t.Errorf("empty verification: %s", b)
	}
	v.warn("stopped", "rg1-rn2", "stopped")
	b, _ = json.Marshal(v.report())
	if want := `{"violations":[],"warnings":[{"rule":"stopped","subject":"rg1-rn2","message":"stopped"}]}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

// TestVerifyTextLastLine: one shape, with singular and plural.
func TestVerifyTextLastLine(t *testing.T) {
	m, _ := threeNodeMeta(nil)
	for _, tc := range []struct {
		violations, warnings int
		want                 string
	}{
		{0, 0, "Verification complete: 0 violations, 0 warnings."},
		{0, 1, "Verification complete: 0 violations, 1 warning."},
		{1, 2, "Verification complete: 1 violation, 2 warnings."},
	} {
		var v verification
		for range tc.violations {
			v.violate("r", "s", "m")
		}
		for range tc.warnings {
			v.warn("r", "s", "m")
		}
		text := verifyText(m, 1, 3, 1, &v)
		if !strings.HasSuffix(text, "\n"+tc.want) || !strings.Contains(text, "3 storage nodes, 3 reachable; 1 admin\n") {
			t.Errorf("got:\n%s\nwant last line %q", text, tc.want)
		}
	}
}

// TestVerifyNodeAdvice: a node that does not answer and hosts replicas is
// told how to replace it (migrate-sn, or rejoin-as); one that migrate-sn
// emptied is a warning whose advice, remove-sn, the store accepts.
func TestVerifyNodeAdvice(t *testing.T) {
	up := nodeReport{1: "follower", 2: "follower"}
	m, infos := threeNodeMeta(map[uint64]nodeReport{1: up, 2: up})
	var v verification
	(&Service{}).verifyNodes(m, infos, &v)
	if len(v.Violations) != 1 || !strings.Contains(v.Violations[0].Message, "plan migrate-sn -from sn3 -to snN -wait") ||
		!strings.Contains(v.Violations[0].Message, "--rejoin-as sn3") {
		t.Fatalf("sn3 down with replicas: %+v", v.Violations)
	}

	m.SNs[2].Gone = true
	for i := range m.Deployed.Shards {
		m.Deployed.Shards[i].Replicas = []topology.NodeID{1, 2}
	}
	v = verification{}
	(&Service{}).verifyNodes(m, infos, &v)
	if len(v.Violations) != 0 || len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0].Message, "plan remove-sn -sn sn3 -wait") {
		t.Fatalf("sn3 gone, emptied: violations %+v warnings %+v; want one warning advising remove-sn", v.Violations, v.Warnings)
	}
}
