package admin

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// The admin leader rebuilds, from its peers, a replica that has answered
// its leader without being able to follow it for Config.RepairStuckAfter
// (docs/design/20261129_stuck_repair.md):
//
//	healthy ──named by stuckFollowers──► stuck (since: the first such poll)
//	stuck ──a poll does not name it──► healthy
//	stuck ≥ after, guards pass ──► Control.RebuildReplica, an event
//	rebuilt ──stuck again──► stuck, not rebuilt again for repairBackoff
//
// The guards (repairBlocked): the replica does not hold a history restored
// from a snapshot (restoredAhead: it may be the first node of a restore
// done one node at a time, which the rebuild would undo); the shard has a
// leader other than the replica and a majority of healthy replicas without
// it, so every committed entry stays on replicas that are kept; no plan
// runs. The
// marks live on incidentLoop's goroutine only and are dropped when this
// replica loses the leadership.

// repairBackoff is how long after a rebuild the same replica is not
// rebuilt again: stuck again so soon, its cause is not one a rebuild fixes.
const repairBackoff = 5 * time.Minute

// restoredHeld is why the admin does not rebuild a replica that holds a
// restored history.
const restoredHeld = "it holds a history restored from a snapshot, which a rebuild would undo: if its shard's other replicas are to be restored from the same snapshot, stop their nodes and restore them; if not, restart it on an empty root with --rejoin-as"

// repairMark is the admin leader's record of one replica named stuck.
type repairMark struct {
	since   time.Time // the first poll of this stuck spell; zero: not stuck now
	rebuilt time.Time // when the admin last had it rebuilt; zero: never
	held    string    // why the guards last held it back (logged when it changes)
}

// stuckRepair is one replica due for a rebuild.
type stuckRepair struct {
	shard    topology.Shard
	sn       uint64
	why      string
	stuckFor time.Duration // how long it has been stuck
}

// dueRepairs updates marks from this poll's answers and returns the
// replicas stuck for at least after that the guards let the admin rebuild.
// A replica the guards hold back is returned in held, with why.
func dueRepairs(m *Meta, infos map[uint64]*controlpb.NodeInfo, marks map[string]*repairMark, now time.Time, after time.Duration) (due []stuckRepair, held map[string]string) {
	seen := map[string]bool{}
	for _, sh := range m.Deployed.Shards {
		stuck := stuckFollowers(sh, infos)
		for sn, why := range stuck {
			name := serviceName(uint64(sh.ID), sn)
			seen[name] = true
			mk := marks[name]
			if mk == nil {
				mk = &repairMark{}
				marks[name] = mk
			}
			if mk.since.IsZero() {
				mk.since = now
			}
			if now.Sub(mk.since) < after || (!mk.rebuilt.IsZero() && now.Sub(mk.rebuilt) < repairBackoff) {
				continue
			}
			if reason := repairBlocked(m, sh, sn, stuck, infos); reason != "" {
				if held == nil {
					held = map[string]string{}
				}
				held[name] = reason
				continue
			}
			due = append(due, stuckRepair{shard: sh, sn: sn, why: why, stuckFor: now.Sub(mk.since)})
		}
	}
	for name, mk := range marks {
		if !seen[name] {
			mk.since = time.Time{}
			if mk.rebuilt.IsZero() || now.Sub(mk.rebuilt) >= repairBackoff {
				delete(marks, name)
			}
		}
	}
	return due, held
}

// repairBlocked says why the admin may not rebuild replica sn of shard sh
// now ("" when it may): it holds a restored history, a plan runs, or the
// shard lacks a leader other than it with a majority of healthy replicas
// (running, answering, storage ok, not rejoining and not stuck) without
// it.
func repairBlocked(m *Meta, sh topology.Shard, sn uint64, stuck map[uint64]string, infos map[uint64]*controlpb.NodeInfo) string {
	if restoredAhead(sh, sn, infos) {
		return restoredHeld
	}
	for _, p := range m.Plans {
		if p.State == Running {
			return fmt.Sprintf("plan %d (%s) is running", p.ID, p.Name)
		}
	}
	healthy, leader := 0, false
	for _, r := range sh.Replicas {
		id := uint64(r)
		info := infos[id]
		st := shardState(info, uint64(sh.ID))
		if id == sn || info == nil || st == nil || stuck[id] != "" || storageState(info) != storageOK ||
			!st.GetRunning() || st.GetRejoining() || st.GetRebuilding() || slices.Contains(m.Stopped, serviceName(uint64(sh.ID), id)) {
			continue
		}
		healthy++
		leader = leader || st.GetIsLeader()
	}
	if need := len(sh.Replicas)/2 + 1; !leader || healthy < need {
		return fmt.Sprintf("%s keeps %d healthy replicas of %d without it (a majority is %d) and the leader must be one of them: rebuilding it could lose writes only it and a minority hold",
			topology.ShardName(sh.ID), healthy, len(sh.Replicas), need)
	}
	return ""
}

// repairStuck rebuilds the replicas dueRepairs finds, one RebuildReplica
// each, and records each rebuild in show events. Run by incidentLoop on
// the leader, with this poll's answers.
func (s *Service) repairStuck(ctx context.Context, m *Meta, infos map[uint64]*controlpb.NodeInfo) {
	after := s.cfg.RepairStuckAfter
	if after <= 0 || m.Deployed == nil {
		return
	}
	if s.repairMarks == nil {
		s.repairMarks = map[string]*repairMark{}
	}
	now := time.Now()
	due, held := dueRepairs(m, infos, s.repairMarks, now, after)
	for name, why := range held {
		if mk := s.repairMarks[name]; mk.held != why {
			mk.held = why
			s.log.Warn("a replica that cannot follow its leader is not rebuilt yet", "replica", name, "why", why)
		}
	}
	for _, r := range due {
		name := serviceName(uint64(r.shard.ID), r.sn)
		if err := s.rebuildStuck(ctx, m, r); err != nil {
			s.log.Warn("rebuilding a replica that cannot follow its leader failed; the next poll retries", "replica", name, "err", err)
			continue
		}
		s.repairMarks[name].rebuilt = now
	}
}

// rebuildStuck asks r's node to rebuild its replica from its peers, then
// records it in show events.
func (s *Service) rebuildStuck(ctx context.Context, m *Meta, r stuckRepair) error {
	node := m.sn(r.sn)
	if node == nil {
		return fmt.Errorf("%s is not deployed", snName(r.sn))
	}
	shard := uint64(r.shard.ID)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err := s.control(node.Addr()).RebuildReplica(rctx, &controlpb.RebuildReplicaRequest{Store: m.Store, Shard: shard, Id: uint64(time.Now().UnixNano())})
	cancel()
	if err != nil {
		return fmt.Errorf("%s: %s", snName(r.sn), taskError(err))
	}
	name := serviceName(shard, r.sn)
	s.log.Warn("rebuilt a replica that could not follow its leader", "replica", name, "stuck_for", r.stuckFor.Round(time.Second), "why", r.why)
	_, err = s.store.update(ctx, func(m *Meta) error {
		m.event("%s: %s could not follow its leader for %s (%s): the admin had it rebuilt from its peers (its data deleted; it installs its leader's snapshot)",
			snName(r.sn), name, r.stuckFor.Round(time.Second), r.why)
		return nil
	})
	if err != nil {
		s.log.Warn("recording a replica's rebuild in show events failed", "replica", name, "err", err)
	}
	return nil
}
