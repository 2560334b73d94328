package admin

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestShardHealth(t *testing.T) {
	up := nodeReport{1: "follower", 2: "follower"}
	for _, tc := range []struct {
		name    string
		reports map[uint64]nodeReport
		stopped []string
		want    string // rg1's health
	}{
		{"leader, all up", map[uint64]nodeReport{1: {1: "leader"}, 2: up, 3: up}, nil, healthy},
		{"leader, a node down", map[uint64]nodeReport{1: {1: "leader"}, 2: up}, nil, writableDegraded},
		{"leader, a replica stopped", map[uint64]nodeReport{1: {1: "leader"}, 2: {1: "stopped"}, 3: up}, []string{"rg1-rn2"}, writableDegraded},
		{"all up, no leader (election)", map[uint64]nodeReport{1: up, 2: up, 3: up}, nil, readOnly},
		{"a lone replica that still calls itself leader", map[uint64]nodeReport{1: {1: "leader"}}, nil, readOnly},
		{"lone leader, two stopped", map[uint64]nodeReport{1: {1: "leader"}, 2: {1: "stopped"}, 3: {1: "stopped"}}, []string{"rg1-rn2", "rg1-rn3"}, readOnly},
		{"no node answers", nil, nil, offline},
		{"every replica stopped", map[uint64]nodeReport{1: {1: "stopped"}, 2: {1: "stopped"}, 3: {1: "stopped"}}, nil, offline},
	} {
		m, infos := threeNodeMeta(tc.reports)
		m.Stopped = tc.stopped
		if got := shardHealth(m, m.Deployed.Shards[0], infos); got.Status != tc.want {
			t.Errorf("%s: %+v, want %s", tc.name, got, tc.want)
		}
	}
}

func TestShardStatus(t *testing.T) {
	var c shardStatus
	for _, h := range []string{healthy, healthy, writableDegraded, readOnly, offline} {
		c.add(h)
	}
	if want := "healthy: 2 writable-degraded: 1 read-only: 1 offline: 1 total: 5"; c.String() != want {
		t.Errorf("%q, want %q", c, want)
	}
	b, _ := json.Marshal(c)
	if want := `{"healthy":2,"writable_degraded":1,"read_only":1,"offline":1,"total":5}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
}

func TestAdminState(t *testing.T) {
	_, infos := threeNodeMeta(map[uint64]nodeReport{1: {}, 2: {}})
	infos[1].Admin = true
	for _, tc := range []struct {
		id   uint64
		want string
	}{
		{1, "RUNNING,MASTER"},  // the leader
		{2, "NOT RUNNING"},     // answers, hosts no admin
		{3, "UNREACHABLE"},     // does not answer
		{4, "RUNNING,REPLICA"}, // the node asking
	} {
		if got := adminState(tc.id, 1, 4, infos); got != tc.want {
			t.Errorf("adminState(sn%d) = %s, want %s", tc.id, got, tc.want)
		}
	}
	infos[2].Admin = true
	if got := adminState(2, 1, 4, infos); got != "RUNNING,REPLICA" {
		t.Errorf("adminState(sn2) = %s, want RUNNING,REPLICA", got)
	}
}

// TestPingText: the summary lines come first and unhealthy shards are
// named after the nodes.
func TestPingText(t *testing.T) {
	m, infos := threeNodeMeta(map[uint64]nodeReport{1: {1: "follower", 2: "leader"}, 2: {1: "follower", 2: "follower"}})
	r := pingReport{Store: m.Store, TopologySeq: 1, AdminStatus: healthy}
	for _, sh := range m.Deployed.Shards {
		p := shardHealth(m, sh, infos)
		r.ShardStatus.add(p.Status)
		r.Shards = append(r.Shards, p)
	}
	for _, sn := range m.SNs {
		n := pingNode{SN: sn.ID, Addr: sn.Addr(), Status: "UNREACHABLE"}
		if infos[sn.ID] != nil {
			n.Status = "RUNNING"
		}
		r.StorageNodes = append(r.StorageNodes, n)
	}
	text := pingText(m, r)
	for _, want := range []string{
		"Shard Status: healthy: 0 writable-degraded: 1 read-only: 1 offline: 0 total: 2\nAdmin Status: healthy\n",
		"Storage Node [sn3] on 127.0.0.1:5003  Zone:   Status: UNREACHABLE",
		"Shard [rg1]\tStatus: read-only (2 of 3 replicas up, no leader yet: an election is in progress; writes wait for it)",
		"Shard [rg2]\tStatus: writable-degraded (2 of 3 replicas up)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("ping text lacks %q:\n%s", want, text)
		}
	}
}

func TestLeaderNote(t *testing.T) {
	for _, tc := range []struct {
		sh   pingShard
		want string
	}{
		{pingShard{Status: healthy, Up: 3, Total: 3}, ""},
		{pingShard{Status: writableDegraded, Up: 2, Total: 3}, ""},
		{pingShard{Status: readOnly, Up: 3, Total: 3}, "an election is in progress"},
		{pingShard{Status: readOnly, Up: 1, Total: 3}, "fewer than a majority up"},
		{pingShard{Status: offline, Up: 0, Total: 3}, "fewer than a majority up"},
	} {
		if got := leaderNote(tc.sh); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("leaderNote(%+v) = %q, want %q", tc.sh, got, tc.want)
		}
	}
}
