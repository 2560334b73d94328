package topology

import "fmt"

// NodeName is how messages, reports and diffs name a storage node: "sn3".
func NodeName(id NodeID) string { return fmt.Sprintf("sn%d", id) }

// ShardName is how messages, reports and diffs name a shard (a replication
// group): "rg3".
func ShardName(id ShardID) string { return fmt.Sprintf("rg%d", id) }

// nodeList names nodes as "sn1, sn2, sn3".
func nodeList(ids []NodeID) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += NodeName(id)
	}
	return s
}
