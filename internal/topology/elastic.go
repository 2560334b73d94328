package topology

import (
	"fmt"
	"slices"
)

// The elastic operations change a topology that may already be deployed.
// Each takes the current topology (not changed) and the pool it may use
// now (nodes and zones, read as Place reads them), and returns a changed
// copy, validated, with Seq unchanged (the deployer sets it) and MaxShard
// covering every id used. Each changes as little as it can: Compare
// lists what the copy changes, and it always accepts the copy against
// cur. Errors wrap ErrInvalid and say what to change.

// Redistribute keeps every shard of cur and its replicas, adds as many new
// shards as every zone has spare capacity for (as Place: RF replicas of
// each in each zone, on distinct nodes, the nodes with the most spare
// capacity first, at most one shard per partition), then spreads the
// partitions evenly over all shards, moving as few as it can (each shard
// ends with floor or ceil of partitions/shards; the fullest shards give up
// their highest-numbered partitions). New shards get ids above MaxShard.
// It refuses when no new shard fits and the partitions are spread evenly
// already, saying why none fits.
func Redistribute(cur *Topology, nodes []Node, zones []ZoneRF) (*Topology, error) {
	l, err := begin(cur, nodes, zones)
	if err != nil {
		return nil, err
	}
	k := max(0, int64(cur.Partitions)-int64(len(cur.Shards)))
	why := ""
	if k == 0 {
		why = fmt.Sprintf("each of the %d partitions has its own shard already: split the partitions first (topology split-partitions)", cur.Partitions)
	}
	for _, z := range l.pool.zones {
		if n := fitShards(l.zoneSpare(z.Name, k), z.RF, k); n < k {
			k = n
			if n == 0 {
				why = fmt.Sprintf("zone %q has no room for a new shard of %d replicas on distinct storage nodes (spare capacity: %s): add storage nodes to the pool or raise their capacity",
					z.Name, z.RF, l.spareList(z.Name))
			}
		}
	}
	shards := make([]Shard, k)
	for i := range shards {
		shards[i] = Shard{ID: l.t.MaxShard + ShardID(i+1), Origin: randomOrigin()}
	}
	for _, z := range l.pool.zones {
		if err := placeZone(shards, l.pool.byZone[z.Name], z, l.hosted); err != nil {
			return nil, err
		}
	}
	for _, s := range shards {
		for _, r := range s.Replicas {
			l.hosted[r]++
		}
	}
	l.t.Shards = append(l.t.Shards, shards...)
	l.t.MaxShard += ShardID(k)
	l.t.PartitionShard = spreadPartitions(cur.PartitionShard, l.shardIDs())
	if k == 0 && slices.Equal(l.t.PartitionShard, cur.PartitionShard) {
		return nil, fmt.Errorf("%w: nothing to redistribute: the partitions are spread evenly already and no new shard fits: %s", ErrInvalid, why)
	}
	return l.finish()
}

// Rebalance keeps the shards and their partitions and moves replicas (a
// replica on one node replaced by one on another node of its zone) so
// that no replica is on a node outside the pool, every zone holds its RF
// of every shard, and no node hosts more than its capacity, with as few
// moves as it can; then it spreads preferred leaders. A shard never ends
// with fewer replicas in a zone than its RF. It refuses when the pool
// lacks room, and when every replica of a shard would move at once.
func Rebalance(cur *Topology, nodes []Node, zones []ZoneRF) (*Topology, error) {
	l, err := begin(cur, nodes, zones)
	if err != nil {
		return nil, err
	}
	if err := l.rebalance(); err != nil {
		return nil, err
	}
	return l.finish()
}

// Contract fits cur into a pool that lost nodes or capacity: it removes
// the shards that no longer fit (the most shards every zone can host, as
// Place counts them; highest ids first), gives their partitions to the
// remaining shards evenly with as few moves as it can, and moves replicas
// off nodes no longer in the pool as Rebalance does. Nodes that then host
// nothing stay in the topology only if they are in the pool. A removed
// shard's id is never used again (MaxShard).
func Contract(cur *Topology, nodes []Node, zones []ZoneRF) (*Topology, error) {
	l, err := begin(cur, nodes, zones)
	if err != nil {
		return nil, err
	}
	fit := int64(cur.Partitions)
	for _, z := range l.pool.zones {
		caps := l.pool.caps(z.Name)
		s := maxShards(caps, z.RF, fit)
		if s == 0 {
			return nil, fmt.Errorf("%w: zone %q has %s with capacity %s; replication factor %d needs at least %d storage nodes with capacity >= 1, so the pool could host no shard: add storage nodes to the pool",
				ErrInvalid, z.Name, plural(len(caps), "storage node"), capList(caps), z.RF, z.RF)
		}
		fit = min(fit, s)
	}
	if extra := len(l.t.Shards) - int(fit); extra > 0 {
		ids := slices.Sorted(slices.Values(l.shardIDs()))
		l.dropShards(ids[len(ids)-extra:])
	}
	l.t.PartitionShard = spreadPartitions(cur.PartitionShard, l.shardIDs())
	if err := l.rebalance(); err != nil {
		return nil, err
	}
	return l.finish()
}

// ChangeRepFactor raises zone's replication factor to rf: every shard
// gets replicas in the zone up to rf, on the zone's nodes with the most
// spare capacity. The zone's current factor is its RF in zones or the
// most replicas a shard of cur has there, whichever is larger. It refuses
// a zone not in zones, an rf that does not grow, more replicas than the
// zone has nodes, and a zone without the spare capacity.
func ChangeRepFactor(cur *Topology, nodes []Node, zones []ZoneRF, zone string, rf int) (*Topology, error) {
	zones = cur.ZoneRFs(zones)
	l, err := begin(cur, nodes, zones)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(l.pool.zones, func(z ZoneRF) bool { return z.Name == zone })
	if i < 0 {
		var names []string
		for _, z := range l.pool.zones {
			names = append(names, fmt.Sprintf("%q", z.Name))
		}
		return nil, fmt.Errorf("%w: zone %q is not among the pool's zones (%s): join storage nodes of the zone to the pool, or name another zone", ErrInvalid, zone, joinComma(names))
	}
	old, zn := l.pool.zones[i].RF, l.pool.byZone[zone]
	switch {
	case rf < old:
		return nil, fmt.Errorf("%w: zone %q has replication factor %d; it can only grow (lowering it is not supported): give %d or more", ErrInvalid, zone, old, old+1)
	case rf == old:
		return nil, fmt.Errorf("%w: zone %q has replication factor %d already: give a larger one to add replicas", ErrInvalid, zone, old)
	case rf > len(zn):
		return nil, fmt.Errorf("%w: zone %q has %s in the pool; replication factor %d needs %d: deploy storage nodes in the zone and join them to the pool", ErrInvalid, zone, plural(len(zn), "storage node"), rf, rf)
	}
	l.pool.zones[i].RF = rf
	need, room := 0, 0
	for si := range l.t.Shards {
		need += max(0, rf-l.inZone(si, zone))
	}
	for _, n := range zn {
		room += max(0, min(l.spare(n.ID), len(l.t.Shards)))
	}
	for si := range l.t.Shards {
		for l.inZone(si, zone) < rf {
			n, ok := l.target(si, zone)
			if !ok {
				return nil, fmt.Errorf("%w: zone %q needs %s to reach replication factor %d, but its storage nodes have room for %d (spare capacity: %s) on nodes that do not yet host the shards: add storage nodes to the pool or raise their capacity",
					ErrInvalid, zone, plural(need, "more replica"), rf, room, l.spareList(zone))
			}
			l.add(si, n)
		}
	}
	return l.finish()
}

// ZoneRFs returns zones with each replication factor raised to the most
// replicas a shard of t holds on t's nodes of that zone: after
// ChangeRepFactor, a topology holds more replicas in a zone than the
// zone's recorded factor until the change is deployed.
func (t *Topology) ZoneRFs(zones []ZoneRF) []ZoneRF {
	out := slices.Clone(zones)
	zoneOf := make(map[NodeID]string, len(t.Nodes))
	for _, n := range t.Nodes {
		zoneOf[n.ID] = n.Zone
	}
	for i := range out {
		for _, s := range t.Shards {
			c := 0
			for _, r := range s.Replicas {
				if zoneOf[r] == out[i].Name {
					c++
				}
			}
			out[i].RF = max(out[i].RF, c)
		}
	}
	return out
}

// zoneSpare returns how many replicas of new shards each node of zone may
// take, at most limit.
func (l *layout) zoneSpare(zone string, limit int64) []int64 {
	var out []int64
	for _, n := range l.pool.byZone[zone] {
		out = append(out, max(0, min(int64(l.spare(n.ID)), limit)))
	}
	return out
}

// spareList is "sn1 0, sn2 2" for zone's nodes.
func (l *layout) spareList(zone string) string {
	var out []string
	for _, n := range l.pool.byZone[zone] {
		out = append(out, NodeName(n.ID)+" "+spareText(l.spare(n.ID)))
	}
	return joinComma(out)
}
