package client

import (
	"cmp"
	"hash/maphash"
	"slices"

	"github.com/cairndb/cairn/internal/topology"
)

// readOrder says in which order a read that any replica may serve
// (NoneRequired, TimeLag, AtVersion) tries a shard's replicas.
//
// By default each client has a home among a shard's replicas: the replica it
// ranks first. Ranks are a hash of the client's random seed and the node id
// (rendezvous hashing), so different clients rank the nodes differently and
// together spread over them, while one client's reads of a shard all go to
// one node, over warm connections, and see that replica's state only move
// forward. A node that joins or leaves changes no other node's rank, so only
// the clients whose home it was (or becomes) move. With Config.SpreadReads
// the client sends its reads round robin instead, from rr.
type readOrder struct {
	spread bool
	rr     uint64
	seed   maphash.Seed
}

// append appends replicas to dst in the order the read tries them.
func (o readOrder) append(dst, replicas []topology.NodeID) []topology.NodeID {
	n := uint64(len(replicas))
	if o.spread {
		for i := range n {
			dst = append(dst, replicas[(o.rr+i)%n])
		}
		return dst
	}
	start := len(dst)
	dst = append(dst, replicas...)
	slices.SortFunc(dst[start:], func(a, b topology.NodeID) int {
		return cmp.Compare(maphash.Comparable(o.seed, a), maphash.Comparable(o.seed, b))
	})
	return dst
}

// readOrder returns the order of this client's next replica read.
func (c *Client) readOrder() readOrder {
	if c.cfg.SpreadReads {
		return readOrder{spread: true, rr: c.rr.Add(1)}
	}
	return readOrder{seed: c.seed}
}
