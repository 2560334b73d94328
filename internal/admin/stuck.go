package admin

import (
	"fmt"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// aheadLag is how far a replica's applied index may run ahead of its
// leader's before it is known to hold another history: a follower never
// applies more than its leader committed, and a restore jumps 2^40.
const aheadLag = 1 << 39

// stuckFollowers names the replicas of shard sh that answer but cannot
// follow its leader, each with why: those its leader reports (it ignores
// their acknowledgements, or they take none of its log), those that report
// themselves (the leader remembers a log they lost), and those whose
// applied index is far beyond the leader's. They count as down in ping,
// and verify configuration reports them as violations. A replica whose
// node reports its storage not ok (low disk, read-only ...) is left to
// the storage checks, whose advice fits, and one that waits to be
// readmitted (rebuilding, rejoining) is on its way back.
func stuckFollowers(sh topology.Shard, infos map[uint64]*controlpb.NodeInfo) map[uint64]string {
	leader := leaderState(sh, infos)
	if leader == nil {
		return nil
	}
	reported := map[uint64]string{}
	for id, why := range leader.GetStuck() {
		reported[id] = why
	}
	for _, r := range sh.Replicas { // a follower that knows its leader forgot it
		if why := shardState(infos[uint64(r)], uint64(sh.ID)).GetStuck()[uint64(r)]; why != "" && reported[uint64(r)] == "" {
			reported[uint64(r)] = why
		}
	}
	stuck := map[uint64]string{}
	for id, why := range reported {
		info := infos[id]
		st := shardState(info, uint64(sh.ID))
		switch {
		case info != nil && storageState(info) != storageOK:
			// its node refuses appends (low disk ...): verifyStorage says why
		case st.GetRebuilding() || st.GetRejoining():
			// it waits to be readmitted: a replica on its way back
		default:
			stuck[id] = why
		}
	}
	for _, r := range sh.Replicas {
		st := shardState(infos[uint64(r)], uint64(sh.ID))
		if farAhead(st, leader) {
			stuck[uint64(r)] = fmt.Sprintf("it has applied index %d, far beyond its leader's %d: it holds a history its leader never had (it was restored alone, or started on an old copy of its root)",
				st.GetApplied(), leader.GetApplied())
		}
	}
	return stuck
}

// restoredAhead reports whether replica sn of shard sh has applied far
// beyond its leader: it holds a history restored from a snapshot that its
// leader never had. The admin does not rebuild such a replica on its own
// (repair_stuck.go): it may be the first of a shard restored one node at
// a time, whose other replicas are about to be restored too.
func restoredAhead(sh topology.Shard, sn uint64, infos map[uint64]*controlpb.NodeInfo) bool {
	return farAhead(shardState(infos[sn], uint64(sh.ID)), leaderState(sh, infos))
}

// farAhead reports whether follower st has applied more than aheadLag
// beyond its leader (nil: none known).
func farAhead(st, leader *controlpb.ShardState) bool {
	return st != nil && leader != nil && !st.GetIsLeader() && st.GetApplied() > leader.GetApplied()+aheadLag
}

// leaderState is the state of shard sh's leader among infos, or nil.
func leaderState(sh topology.Shard, infos map[uint64]*controlpb.NodeInfo) *controlpb.ShardState {
	var leader *controlpb.ShardState
	for _, r := range sh.Replicas {
		if st := shardState(infos[uint64(r)], uint64(sh.ID)); st.GetIsLeader() {
			leader = st
		}
	}
	return leader
}
