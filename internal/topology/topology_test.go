package topology

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/keys"
)

func nodes(n int) []Node {
	var out []Node
	for i := 1; i <= n; i++ {
		out = append(out, Node{ID: NodeID(i), Addr: fmt.Sprintf("127.0.0.1:%d", 5000+i)})
	}
	return out
}

func TestBuildSpreadsReplicasPartitionsAndLeaders(t *testing.T) {
	for _, tc := range []struct{ nodes, shards, rf int }{{3, 2, 3}, {3, 3, 3}, {6, 4, 3}, {1, 1, 1}, {5, 5, 3}} {
		topo, err := Build("kvstore", 100, nodes(tc.nodes), tc.shards, tc.rf)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		leads := map[NodeID]int{}
		for _, s := range topo.Shards {
			if len(s.Replicas) != tc.rf {
				t.Errorf("%+v: shard %d has %d replicas", tc, s.ID, len(s.Replicas))
			}
			leads[s.Preferred]++
			if n := len(topo.PartitionsOf(s.ID)); n < 100/tc.shards || n > 100/tc.shards+1 {
				t.Errorf("%+v: shard %d owns %d partitions", tc, s.ID, n)
			}
		}
		for n, c := range leads {
			if c > (tc.shards+tc.nodes-1)/tc.nodes {
				t.Errorf("%+v: node %d is preferred leader of %d shards", tc, n, c)
			}
		}
	}
}

func TestBuildRefusesImpossible(t *testing.T) {
	if _, err := Build("s", 100, nodes(2), 1, 3); !errors.Is(err, ErrInvalid) {
		t.Errorf("rf 3 on 2 nodes: %v", err)
	}
	if _, err := Build("s", 2, nodes(3), 3, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("3 shards on 2 partitions: %v", err)
	}
}

func TestContiguousPartitionsAndRoundTrips(t *testing.T) {
	topo, err := Build("kvstore", 10, nodes(3), 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	prev := topo.ShardFor(0)
	for p := keys.PartitionID(1); p < 10; p++ {
		if s := topo.ShardFor(p); s < prev {
			t.Fatalf("partition %d of shard %d after shard %d: blocks are not contiguous", p, s, prev)
		} else {
			prev = s
		}
	}
	b, err := json.Marshal(topo)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(b)
	if err != nil || back.Seq != topo.Seq || len(back.Shards) != 3 || back.Shards[2].Origin != topo.Shards[2].Origin {
		t.Fatalf("decode: %+v, %v", back, err)
	}
	if _, err := Decode([]byte(`{"store": "x", "seq": 1}`)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("decode of a topology without partitions: %v, want ErrInvalid", err)
	}
	if _, err := Decode([]byte(`{`)); err == nil || !strings.Contains(err.Error(), "not a topology") {
		t.Fatalf("decode of bad JSON: %v", err)
	}
	wire, err := FromPB(topo.ToPB())
	if err != nil || wire.Shards[2].Origin != topo.Shards[2].Origin {
		t.Fatalf("wire round trip: %+v, %v", wire, err)
	}
	bad := *topo
	bad.Shards = append([]Shard{}, topo.Shards...)
	bad.Shards[0].Replicas = []NodeID{1, 1, 2}
	if err := bad.Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("doubled replica: %v", err)
	}
}
