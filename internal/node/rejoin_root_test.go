package node

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/admin"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// TestWriteRejoinRoot: an empty root gets the old node's config,
// membership, marker and topology; run again it changes nothing; a root of
// another node is refused.
func TestWriteRejoinRoot(t *testing.T) {
	topo := &topology.Topology{Store: "kv", Seq: 7, Partitions: 1,
		Nodes:          []topology.Node{{ID: 1, Addr: "h:1"}, {ID: 2, Addr: "h:2"}},
		Shards:         []topology.Shard{{ID: 1, Replicas: []topology.NodeID{1, 2}}},
		PartitionShard: []topology.ShardID{1}}
	tb, _ := json.Marshal(topo)
	rc := admin.RejoinConfig{Store: "kv", SN: 2, UID: "u2", Host: "h", Port: 2, Capacity: 3, Admin: true,
		Peers: map[uint64]string{1: "h:1", 2: "h:2"}, Topology: tb}
	fs := files.NewMem()
	for range 2 {
		if err := WriteRejoinRoot(fs, "/r", rc); err != nil {
			t.Fatal(err)
		}
	}
	ic, err := LoadInit(fs, "/r")
	if err != nil || ic.UID != "u2" || ic.Port != 2 || ic.Capacity != 3 {
		t.Fatalf("config.json: %+v, %v", ic, err)
	}
	m, ok, err := loadMembership(fs, "/r")
	if err != nil || !ok || m.Store != "kv" || m.SN != 2 || !m.Admin || m.Peers[1] != "h:1" {
		t.Fatalf("membership.json: %+v %v %v", m, ok, err)
	}
	var mk marker
	if err := readChecked(fs, "/r/"+markerFile, &mk); err != nil || mk.Node != 2 || mk.Store != "kv" {
		t.Fatalf("node.json: %+v, %v", mk, err)
	}
	var got topology.Topology
	if err := readChecked(fs, "/r/"+topology.FileName, &got); err != nil || got.Seq != 7 {
		t.Fatalf("topology.json: seq %d, %v", got.Seq, err)
	}
	other := rc
	other.SN, other.UID = 3, "u3"
	if err := WriteRejoinRoot(fs, "/r", other); err == nil || !strings.Contains(err.Error(), "another node") {
		t.Fatalf("rejoining as sn3 on sn2's root: %v, want a refusal", err)
	}
}
