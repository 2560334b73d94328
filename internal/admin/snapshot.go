package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// Snapshots. snapshot create asks each shard's leader to export the shard
// at one Raft index (after a linearizable read barrier) into
// ROOT/snapshots/NAME on that node (Control.SnapshotShard), then asks the
// node of each of the shard's other replicas to copy the files from it
// (Control.CopySnapshot), so that every node holds what it needs to restore
// itself. A copy that fails (its node is down) does not fail the snapshot:
// it is recorded as missing, shown by snapshot create and snapshot list,
// and restoring that node then needs --from. An export that fails on every
// replica of a shard fails the snapshot and removes what was written.

// removeTimeout bounds the removal of a snapshot's files on one node.
const removeTimeout = 10 * time.Second

// notAsked is why a copy is missing on a node that did not answer Describe
// when the snapshot began: it was not asked, so it holds no files.
const notAsked = "unreachable (it did not answer when the snapshot began)"

// snapshotCreate takes snapshot NAME and records where each shard's files
// are.
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
	if p := movingPlan(m); p != nil {
		return nil, failed("plan %d (%s) is running and may be moving partitions, and a snapshot taken meanwhile may hold a partition in two shards or none: take it once the plan ends (plan wait -id %d)", p.ID, p.Name, p.ID)
	}
	infos := s.describeAll(ctx, m)
	snap := Snapshot{Name: name, Time: time.Now().UTC(), TopologySeq: m.Deployed.Seq}
	for _, sh := range m.Deployed.Shards {
		part, err := s.snapshotShard(ctx, m, infos, name, uint64(sh.ID))
		if err != nil {
			s.removeSnapshotFiles(ctx, m, name)
			return nil, failed("snapshot %s: shard rg%d: %v; nothing was kept", name, sh.ID, err)
		}
		s.copySnapshotShard(ctx, m, infos, name, &part)
		snap.Shards = append(snap.Shards, part)
	}
	_, err = s.store.update(ctx, func(m *Meta) error {
		m.Snapshots = append(m.Snapshots, snap)
		m.event("snapshot %s created (%d shards%s)", name, len(snap.Shards), missingNote(m, snap))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return reply(createdText(m, snap), snap)
}

// movingPlan returns a running plan that changes the topology, or nil.
func movingPlan(m *Meta) *Plan {
	for _, p := range m.Plans {
		if p.State == Running && p.Name == "deploy-topology" {
			return p
		}
	}
	return nil
}

// createdText is snapshot create's report: per shard where its files are,
// then what restore needs.
func createdText(m *Meta, snap Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Created snapshot named %s on all %d shards", snap.Name, len(snap.Shards))
	if n := len(missingCopies(m, snap)); n > 0 {
		fmt.Fprintf(&b, ", with %d missing %s", n, plural(n, "copy", "copies"))
	}
	for _, p := range snap.Shards {
		fmt.Fprintf(&b, "\n  rg%d: index %d, %d bytes, crc32c %s, taken on %s in %s", p.Shard, p.Index, p.Bytes, p.CRC32C, snName(p.SN), p.Path)
		if len(p.Copies) > 0 {
			fmt.Fprintf(&b, ", copied to %s", snNames(holderIDs(&p)[1:])) // the copies: holderIDs lists the leader first
		}
		for _, c := range p.Missing {
			fmt.Fprintf(&b, "; not copied to %s: %s", snName(c.SN), c.Error)
		}
	}
	b.WriteString("\n" + restoreAdvice(m, snap))
	return b.String()
}

// restoreAdvice says whether every node can restore itself, and if not
// which nodes need --from and where their shards are.
func restoreAdvice(m *Meta, snap Snapshot) string {
	lacking := map[uint64][]string{}
	var order []uint64
	for _, mc := range missingCopies(m, snap) {
		if _, ok := lacking[mc.sn]; !ok {
			order = append(order, mc.sn)
		}
		lacking[mc.sn] = append(lacking[mc.sn], fmt.Sprintf("rg%d (on %s)", mc.part.Shard, snNames(holderIDs(mc.part))))
	}
	if len(order) == 0 {
		return fmt.Sprintf("Every node holds the shards it hosts in ROOT/snapshots/%s: cairn sn restore needs no --from.", snap.Name)
	}
	slices.Sort(order)
	var lines []string
	for _, id := range order {
		lines = append(lines, fmt.Sprintf("%s lacks %s: restore it with --from naming the root of a node holding them.", snName(id), strings.Join(lacking[id], ", ")))
	}
	return strings.Join(lines, "\n")
}

// missingCopy is a replica's node that has no copy of a shard's files.
type missingCopy struct {
	part *SnapshotShard
	sn   uint64
}

// missingCopies lists, shard by shard, the nodes of the snapshot's
// topology's replicas that hold no copy: those recorded as missing, and
// (for a snapshot taken before copies) any other replica but the leader's.
func missingCopies(m *Meta, snap Snapshot) []missingCopy {
	var out []missingCopy
	for i := range snap.Shards {
		p := &snap.Shards[i]
		for _, r := range snapshotReplicas(m, snap, p) {
			if !slices.Contains(holderIDs(p), r) {
				out = append(out, missingCopy{part: p, sn: r})
			}
		}
	}
	return out
}

// snapshotReplicas returns the nodes that hosted the shard's replicas when
// the snapshot was taken: the deployed topology's, which this version
// never changes once deployed; the recorded ones if it has changed.
func snapshotReplicas(m *Meta, snap Snapshot, p *SnapshotShard) []uint64 {
	if m.Deployed != nil && m.Deployed.Seq == snap.TopologySeq {
		if sh, ok := m.Deployed.Shard(topologyShard(p.Shard)); ok {
			ids := make([]uint64, len(sh.Replicas))
			for i, r := range sh.Replicas {
				ids[i] = uint64(r)
			}
			return ids
		}
	}
	ids := holderIDs(p)
	for _, c := range p.Missing {
		ids = append(ids, c.SN)
	}
	return ids
}

// holderIDs returns the nodes holding the shard's files: its leader's
// first, then the copies.
func holderIDs(p *SnapshotShard) []uint64 {
	ids := []uint64{p.SN}
	for _, c := range p.Copies {
		ids = append(ids, c.SN)
	}
	return ids
}

// missingNote is the event log's note on missing copies.
func missingNote(m *Meta, snap Snapshot) string {
	missing := missingList(missingCopies(m, snap))
	if missing == "" {
		return ""
	}
	return "; copies missing: " + missing
}

// missingList names missing copies: "rg1 on sn2, rg2 on sn3".
func missingList(missing []missingCopy) string {
	parts := make([]string, len(missing))
	for i, mc := range missing {
		parts[i] = fmt.Sprintf("%s on %s", topology.ShardName(topologyShard(mc.part.Shard)), snName(mc.sn))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// electionWait bounds how long snapshotShard waits for a shard whose
// replicas all say an election is under way.
const electionWait = 15 * time.Second

// snapshotShard tries the shard's replicas, the leader first. When every
// replica answers UNAVAILABLE (an election is under way), it asks them
// again, every 250 ms, for up to electionWait.
func (s *Service) snapshotShard(ctx context.Context, m *Meta, infos map[uint64]*controlpb.NodeInfo, name string, shard uint64) (SnapshotShard, error) {
	deadline := time.Now().Add(electionWait)
	for {
		part, errs, retry := s.snapshotShardOnce(ctx, m, infos, name, shard)
		if errs == nil {
			return part, nil
		}
		if !retry || time.Now().After(deadline) {
			return SnapshotShard{}, fmt.Errorf("no replica could export it (%s)", strings.Join(errs, "; "))
		}
		select {
		case <-ctx.Done():
			return SnapshotShard{}, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// snapshotShardOnce asks each replica of the shard in turn, the leader
// first, to export it; it returns the first export, or each replica's
// error and whether all of them were UNAVAILABLE.
func (s *Service) snapshotShardOnce(ctx context.Context, m *Meta, infos map[uint64]*controlpb.NodeInfo, name string, shard uint64) (SnapshotShard, []string, bool) {
	sh, _ := m.Deployed.Shard(topologyShard(shard))
	order := make([]uint64, 0, len(sh.Replicas))
	for _, r := range sh.Replicas {
		order = append(order, uint64(r))
	}
	slices.SortStableFunc(order, func(x, y uint64) int {
		return boolRank(isLeaderOf(infos[y], shard)) - boolRank(isLeaderOf(infos[x], shard))
	})
	var errs []string
	retry := true
	for _, id := range order {
		sn := m.sn(id)
		if sn == nil {
			continue
		}
		r, err := s.control(sn.Addr()).SnapshotShard(ctx, &controlpb.SnapshotShardRequest{Store: m.Store, Name: name, Shard: shard})
		if err == nil {
			return SnapshotShard{Shard: shard, SN: id, Index: r.GetIndex(), Bytes: r.GetBytes(), CRC32C: r.GetCrc32C(), Path: r.GetPath()}, nil, false
		}
		retry = retry && status.Code(err) == codes.Unavailable
		errs = append(errs, snName(id)+": "+taskError(err))
	}
	if errs == nil {
		return SnapshotShard{}, []string{"no replica's node is deployed"}, false
	}
	return SnapshotShard{}, errs, retry
}

// copySnapshotShard copies the shard's files from the node that wrote them
// to the nodes of its other replicas, all at once, and records in p which
// copies were made and which were not.
func (s *Service) copySnapshotShard(ctx context.Context, m *Meta, infos map[uint64]*controlpb.NodeInfo, name string, p *SnapshotShard) {
	sh, _ := m.Deployed.Shard(topologyShard(p.Shard))
	results := make([]SnapshotCopy, len(sh.Replicas))
	var wg sync.WaitGroup
	for i, r := range sh.Replicas {
		if uint64(r) == p.SN {
			continue
		}
		wg.Go(func() { results[i] = s.copySnapshotTo(ctx, m, infos, name, p, uint64(r)) })
	}
	wg.Wait()
	for i, r := range sh.Replicas {
		switch c := results[i]; {
		case uint64(r) == p.SN:
		case c.Error != "":
			p.Missing = append(p.Missing, c)
		default:
			p.Copies = append(p.Copies, c)
		}
	}
}

// copySnapshotTo asks node id to copy the shard's files from p.SN. A node
// that did not answer Describe is not tried: it would hold the command up.
func (s *Service) copySnapshotTo(ctx context.Context, m *Meta, infos map[uint64]*controlpb.NodeInfo, name string, p *SnapshotShard, id uint64) SnapshotCopy {
	to, from := m.sn(id), m.sn(p.SN)
	switch {
	case to == nil || from == nil:
		return SnapshotCopy{SN: id, Error: "not a deployed storage node"}
	case infos[id] == nil:
		return SnapshotCopy{SN: id, Error: notAsked}
	}
	r, err := s.control(to.Addr()).CopySnapshot(ctx, &controlpb.CopySnapshotRequest{Store: m.Store, Name: name, Shard: p.Shard, From: from.Addr()})
	switch {
	case err != nil:
		return SnapshotCopy{SN: id, Error: taskError(err)}
	case r.GetBytes() != p.Bytes || r.GetCrc32C() != p.CRC32C:
		return SnapshotCopy{SN: id, Error: fmt.Sprintf("the copy has %d bytes, crc32c %s; expected %d, %s", r.GetBytes(), r.GetCrc32C(), p.Bytes, p.CRC32C)}
	}
	return SnapshotCopy{SN: id, Path: r.GetPath()}
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

// removeSnapshotFiles deletes the snapshot's files on every storage node at
// once and returns the nodes it could not reach, with the reason.
func (s *Service) removeSnapshotFiles(ctx context.Context, m *Meta, name string) []SnapshotCopy {
	errs := make([]string, len(m.SNs))
	var wg sync.WaitGroup
	for i, sn := range m.SNs {
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, removeTimeout)
			defer cancel()
			if _, err := s.control(sn.Addr()).RemoveSnapshot(rctx, &controlpb.RemoveSnapshotRequest{Store: m.Store, Name: name}); err != nil {
				errs[i] = taskError(err)
			}
		})
	}
	wg.Wait()
	var left []SnapshotCopy
	for i, sn := range m.SNs {
		if errs[i] != "" {
			left = append(left, SnapshotCopy{SN: sn.ID, Error: errs[i]})
		}
	}
	return left
}

func (s *Service) snapshotList(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, sn := range m.Snapshots {
		lines = append(lines, fmt.Sprintf("%s  %s  topology #%d  %d shards  %s%s", sn.Name, sn.Time.Format(time.RFC3339), sn.TopologySeq, len(sn.Shards), copiesSummary(m, sn), reshardNote(m, sn)))
	}
	if len(lines) == 0 {
		lines = []string{"No snapshots. Take one with snapshot create -name NAME"}
	}
	return reply(strings.Join(lines, "\n"), m.Snapshots)
}

// reshardNote says, for a snapshot taken under an older topology than the
// deployed one, that restore re-shards it.
func reshardNote(m *Meta, snap Snapshot) string {
	if m.Deployed == nil || m.Deployed.Seq == snap.TopologySeq {
		return ""
	}
	return fmt.Sprintf("; the store runs topology #%d now: restore re-shards it, and a node hosting partitions its replicas did not hold then needs --from", m.Deployed.Seq)
}

// copiesSummary says, for snapshot list, whether every replica's node
// holds its shards' files.
func copiesSummary(m *Meta, snap Snapshot) string {
	missing := missingList(missingCopies(m, snap))
	if missing == "" {
		return "copies on every replica's node"
	}
	return "missing copies: " + missing + " (restore there needs --from)"
}

// snapshotRemove deletes the snapshot's files on every node it reaches and
// forgets the snapshot; it names the nodes it could not reach that may hold
// files, which stay until deleted by hand.
func (s *Service) snapshotRemove(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	name := a["name"]
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(m.Snapshots, func(x Snapshot) bool { return x.Name == name })
	if i < 0 {
		return nil, notFound("there is no snapshot %s; snapshot list shows them", name)
	}
	left := slices.DeleteFunc(s.removeSnapshotFiles(ctx, m, name), func(c SnapshotCopy) bool { return !mayHold(m.Snapshots[i], c.SN) })
	_, err = s.store.update(ctx, func(m *Meta) error {
		m.Snapshots = slices.DeleteFunc(m.Snapshots, func(x Snapshot) bool { return x.Name == name })
		m.event("snapshot %s removed%s", name, notRemovedNote(left))
		return nil
	})
	if err != nil {
		return nil, err
	}
	text := "Removed snapshot " + name + " from every storage node"
	if len(left) > 0 {
		text = "Removed snapshot " + name + notRemovedNote(left) +
			fmt.Sprintf("\nDelete ROOT/snapshots/%s on those nodes by hand once they are back.", name)
	}
	return reply(text, map[string]any{"removed": name, "not_removed": left})
}

// mayHold reports whether node id may hold files of the snapshot: it took
// a shard's files, holds a copy, or was asked for one and failed part way.
func mayHold(snap Snapshot, id uint64) bool {
	for _, p := range snap.Shards {
		if p.SN == id || slices.ContainsFunc(p.Copies, func(c SnapshotCopy) bool { return c.SN == id }) ||
			slices.ContainsFunc(p.Missing, func(c SnapshotCopy) bool { return c.SN == id && c.Error != notAsked }) {
			return true
		}
	}
	return false
}

// notRemovedNote names the nodes whose files removeSnapshotFiles left.
func notRemovedNote(left []SnapshotCopy) string {
	if len(left) == 0 {
		return ""
	}
	var parts []string
	for _, c := range left {
		parts = append(parts, snName(c.SN)+" ("+c.Error+")")
	}
	return "; not removed on " + strings.Join(parts, ", ")
}
