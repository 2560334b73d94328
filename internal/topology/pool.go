package topology

import (
	"cmp"
	"fmt"
	"slices"
)

// pool is the storage nodes a topology may use, as Place reads them: the
// nodes of the listed zones, grouped by zone, and each zone's replication
// factor. Nodes of zones not listed are left out.
type pool struct {
	nodes  map[NodeID]Node
	byZone map[string][]Node // listed zones only, ascending id
	zones  []ZoneRF
}

// newPool checks nodes and zones and returns the pool, or an error
// wrapping ErrInvalid that says what to change: no zones, a zone listed
// twice, an RF below 1, a zone without nodes, a negative capacity.
func newPool(nodes []Node, zones []ZoneRF) (*pool, error) {
	if len(zones) == 0 {
		return nil, fmt.Errorf("%w: no zones given; name at least one zone and its replication factor", ErrInvalid)
	}
	all := make(map[string][]Node)
	for _, n := range nodes {
		if n.Capacity < 0 {
			return nil, fmt.Errorf("%w: storage node %s has capacity %d; capacity is how many replicas it may host (0: unlimited): set it to 0 or more", ErrInvalid, NodeName(n.ID), n.Capacity)
		}
		all[n.Zone] = append(all[n.Zone], n)
	}
	pl := &pool{nodes: make(map[NodeID]Node), byZone: make(map[string][]Node), zones: slices.Clone(zones)}
	for _, z := range zones {
		zn := all[z.Name]
		switch {
		case pl.byZone[z.Name] != nil:
			return nil, fmt.Errorf("%w: zone %q is listed twice; list each zone once", ErrInvalid, z.Name)
		case z.RF < 1:
			return nil, fmt.Errorf("%w: zone %q has replication factor %d; it must be at least 1", ErrInvalid, z.Name, z.RF)
		case len(zn) == 0:
			return nil, fmt.Errorf("%w: zone %q has no storage nodes (nodes are in zones %s): deploy storage nodes in zone %q or fix the zone name", ErrInvalid, z.Name, zoneNames(all), z.Name)
		}
		pl.byZone[z.Name] = slices.SortedFunc(slices.Values(zn), func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
		for _, n := range zn {
			pl.nodes[n.ID] = n
		}
	}
	return pl, nil
}

// caps returns the capacities of zone's nodes, in id order.
func (pl *pool) caps(zone string) []int {
	var out []int
	for _, n := range pl.byZone[zone] {
		out = append(out, n.Capacity)
	}
	return out
}

// rf returns zone's replication factor, 0 for a zone not listed.
func (pl *pool) rf(zone string) int {
	for _, z := range pl.zones {
		if z.Name == zone {
			return z.RF
		}
	}
	return 0
}
