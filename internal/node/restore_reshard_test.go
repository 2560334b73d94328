package node

import (
	"reflect"
	"testing"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/topology"
)

// TestOldPartitions: a shard of a topology whose 4 partitions were split
// into 8 and partly moved takes, from the old topology, exactly the old
// partitions whose hashes it owns now.
func TestOldPartitions(t *testing.T) {
	old := &topology.Topology{Partitions: 4, PartitionShard: []topology.ShardID{1, 1, 2, 2}}
	now := &topology.Topology{Partitions: 8, PartitionShard: []topology.ShardID{1, 1, 1, 3, 2, 2, 3, 3}}
	cases := map[topology.ShardID]map[keys.PartitionID][]keys.PartitionID{
		1: {0: {0, 1}, 1: {2}},
		2: {2: {4, 5}},
		3: {1: {3}, 3: {6, 7}},
	}
	for s, want := range cases {
		if got := oldPartitions(now, old, s); !reflect.DeepEqual(got, want) {
			t.Errorf("rg%d takes %v from the old topology, want %v", s, got, want)
		}
	}
	// Without a split, a partition maps to itself.
	same := &topology.Topology{Partitions: 4, PartitionShard: []topology.ShardID{1, 3, 2, 2}}
	if got := oldPartitions(same, old, 3); !reflect.DeepEqual(got, map[keys.PartitionID][]keys.PartitionID{1: {1}}) {
		t.Errorf("rg3 takes %v, want partition 1 alone", got)
	}
}
