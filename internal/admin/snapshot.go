package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
)

// snapshotCreate asks each shard's leader to export the shard at one Raft
// index (after a linearizable read barrier) into ROOT/snapshots/NAME on
// that node, and records where each shard went.
func (s *Service) snapshotCreate(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	name := a["name"]
	if err := checkName("snapshot", name); err != nil {
		return nil, err
	}
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	if m.Deployed == nil {
		return nil, failed("no topology is deployed, so there is nothing to back up")
	}
	if slices.ContainsFunc(m.Snapshots, func(x Snapshot) bool { return x.Name == name }) {
		return nil, failed("snapshot %s exists; remove it with snapshot remove -name %s or pick another name", name, name)
	}
	infos := s.describeAll(ctx, m)
	snap := Snapshot{Name: name, Time: time.Now().UTC(), TopologySeq: m.Deployed.Seq}
	for _, sh := range m.Deployed.Shards {
		part, err := s.snapshotShard(ctx, m, infos, name, uint64(sh.ID))
		if err != nil {
			s.removeSnapshotFiles(ctx, m, name)
			return nil, failed("snapshot %s: shard rg%d: %v; nothing was kept", name, sh.ID, err)
		}
		snap.Shards = append(snap.Shards, part)
	}
	_, err = s.store.update(ctx, func(m *Meta) error {
		m.Snapshots = append(m.Snapshots, snap)
		m.event("snapshot %s created (%d shards)", name, len(snap.Shards))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Created snapshot named %s on all %d shards", name, len(snap.Shards))
	for _, p := range snap.Shards {
		fmt.Fprintf(&b, "\n  rg%d: index %d, %d bytes, on %s in %s", p.Shard, p.Index, p.Bytes, snName(p.SN), p.Path)
	}
	return reply(b.String(), snap)
}

// snapshotShard tries the shard's replicas, the leader first.
func (s *Service) snapshotShard(ctx context.Context, m *Meta, infos map[uint64]*controlpb.NodeInfo, name string, shard uint64) (SnapshotShard, error) {
	sh, _ := m.Deployed.Shard(topologyShard(shard))
	order := make([]uint64, 0, len(sh.Replicas))
	for _, r := range sh.Replicas {
		order = append(order, uint64(r))
	}
	slices.SortStableFunc(order, func(x, y uint64) int {
		return boolRank(isLeaderOf(infos[y], shard)) - boolRank(isLeaderOf(infos[x], shard))
	})
	var errs []string
	for _, id := range order {
		sn := m.sn(id)
		if sn == nil {
			continue
		}
		r, err := s.control(sn.Addr()).SnapshotShard(ctx, &controlpb.SnapshotShardRequest{Store: m.Store, Name: name, Shard: shard})
		if err == nil {
			return SnapshotShard{Shard: shard, SN: id, Index: r.GetIndex(), Bytes: r.GetBytes(), Path: r.GetPath()}, nil
		}
		errs = append(errs, snName(id)+": "+taskError(err))
	}
	return SnapshotShard{}, fmt.Errorf("no replica could export it (%s)", strings.Join(errs, "; "))
}

func isLeaderOf(info *controlpb.NodeInfo, shard uint64) bool {
	for _, st := range info.GetShards() {
		if st.GetShard() == shard {
			return st.GetIsLeader()
		}
	}
	return false
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Service) removeSnapshotFiles(ctx context.Context, m *Meta, name string) []string {
	var errs []string
	for _, sn := range m.SNs {
		if _, err := s.control(sn.Addr()).RemoveSnapshot(ctx, &controlpb.RemoveSnapshotRequest{Store: m.Store, Name: name}); err != nil {
			errs = append(errs, snName(sn.ID)+": "+taskError(err))
		}
	}
	return errs
}

func (s *Service) snapshotList(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, sn := range m.Snapshots {
		lines = append(lines, fmt.Sprintf("%s  %s  topology #%d  %d shards", sn.Name, sn.Time.Format(time.RFC3339), sn.TopologySeq, len(sn.Shards)))
	}
	if len(lines) == 0 {
		lines = []string{"No snapshots. Take one with snapshot create -name NAME"}
	}
	return reply(strings.Join(lines, "\n"), m.Snapshots)
}

func (s *Service) snapshotRemove(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	name := a["name"]
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(m.Snapshots, func(x Snapshot) bool { return x.Name == name }) {
		return nil, failed("there is no snapshot %s; snapshot list shows them", name)
	}
	if errs := s.removeSnapshotFiles(ctx, m, name); len(errs) > 0 {
		return nil, failed("snapshot %s: could not remove it everywhere (%s); start those nodes and retry", name, strings.Join(errs, "; "))
	}
	_, err = s.store.update(ctx, func(m *Meta) error {
		m.Snapshots = slices.DeleteFunc(m.Snapshots, func(x Snapshot) bool { return x.Name == name })
		m.event("snapshot %s removed", name)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return reply("Removed snapshot "+name, map[string]any{"removed": name})
}
