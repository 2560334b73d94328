package admin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// plan verify-data (Oracle NoSQL's name) checks the store's data two ways:
//
//   - verify-blocks, one task per storage node: the node reads every block
//     of its engine's sstables, and its MANIFEST and WALs, checking their
//     checksums (Control.VerifyBlocks). Damage marks that engine corrupt;
//     the task names the node and the file.
//   - verify-shard, one task per shard: the shard's leader proposes a
//     Checksum command, every replica checksums each partition at the
//     index it applied it at, and the task compares them partition by
//     partition (verifydata_compare.go). A replica whose sums differ from
//     the majority's is rebuilt from its peers (Control.RebuildReplica,
//     unless -no-repair, and only if the shard keeps a majority of running
//     replicas meanwhile), then the shard is checksummed again to confirm.
//
// The last task, verify-report, fails the plan if any task found something
// it did not repair. Each task's findings are sentences in Task.Result
// (show plan -id N); its progress, while it runs, is in Task.Progress.

// defaultVerifyRate is -rate's default, in MB/s.
const defaultVerifyRate = 100

func (s *Service) planVerifyData(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	if m.Deployed == nil {
		return nil, failed("no topology is deployed, so there is no data to verify")
	}
	nodes, shards, err := s.verifyTargets(m, a)
	if err != nil {
		return nil, err
	}
	mb := defaultVerifyRate
	if v, ok := a["rate"]; ok {
		mb, _ = strconv.Atoi(v)
	}
	rate := strconv.FormatInt(int64(mb)*1_000_000, 10)
	repair := strconv.FormatBool(a["no-repair"] != "true")
	var tasks []*Task
	for _, sn := range nodes {
		tasks = append(tasks, newTask("verify-blocks", "verify every block on "+snName(sn),
			map[string]string{"sn": strconv.FormatUint(sn, 10), "rate": rate}))
	}
	for _, sh := range shards {
		tasks = append(tasks, newTask("verify-shard", "compare the replicas of "+rgName(sh)+" partition by partition",
			map[string]string{"shard": strconv.FormatUint(sh, 10), "rate": rate, "repair": repair}))
	}
	tasks = append(tasks, newTask("verify-report", "fail the plan if anything was found and not repaired", nil))
	return s.createPlan(ctx, "verify-data", a, tasks, nil)
}

// verifyTargets returns the nodes whose blocks and the shards whose
// replicas plan verify-data checks: everything, or what -sn and -shard
// select (-sn: that node, and the shards it hosts; -shard: that shard,
// and the nodes hosting it; both: that node and that shard).
func (s *Service) verifyTargets(m *Meta, a map[string]string) (nodes, shards []uint64, err error) {
	t := m.Deployed
	for _, n := range t.Nodes {
		nodes = append(nodes, uint64(n.ID))
	}
	for _, sh := range t.Shards {
		shards = append(shards, uint64(sh.ID))
	}
	if v := a["shard"]; v != "" {
		id, err := parseID(v, "rg")
		if err != nil {
			return nil, nil, usageError("-shard: %v", err)
		}
		sh, ok := t.Shard(topologyShard(id))
		if !ok {
			return nil, nil, notFound("there is no shard %s; show topology lists them", rgName(id))
		}
		shards, nodes = []uint64{id}, nil
		for _, r := range sh.Replicas {
			nodes = append(nodes, uint64(r))
		}
	}
	if v := a["sn"]; v != "" {
		sn, err := s.snArg(m, v)
		if err != nil {
			return nil, nil, err
		}
		nodes = []uint64{sn.ID}
		if a["shard"] == "" {
			shards = nil
			for _, sh := range t.ShardsOn(topologyNode(sn.ID)) {
				shards = append(shards, uint64(sh.ID))
			}
		}
	}
	return nodes, shards, nil
}

// noteTask changes task i of plan id in the metadata.
func (s *Service) noteTask(ctx context.Context, id, i int, fn func(t *Task)) error {
	_, err := s.store.update(ctx, func(m *Meta) error {
		p := m.plan(id)
		if p == nil || i < 0 || i >= len(p.Tasks) {
			return errInterrupted
		}
		fn(p.Tasks[i])
		return nil
	})
	return err
}

// nextCheckID returns a fresh id for a node-side check of task i of plan
// p: the plan, the task, and a round the task counts up in its args (so an
// id is never reused, even after an admin failover).
func (s *Service) nextCheckID(ctx context.Context, p *Plan, i int) (uint64, error) {
	var round uint64
	err := s.noteTask(ctx, p.ID, i, func(t *Task) {
		if t.Args == nil {
			t.Args = map[string]string{}
		}
		round, _ = strconv.ParseUint(t.Args["round"], 10, 64)
		round++
		t.Args["round"] = strconv.FormatUint(round, 10)
	})
	return uint64(p.ID)<<40 | uint64(i)<<24 | round&(1<<24-1), err
}

// progressEvery bounds how often a long task writes its progress.
const progressEvery = 2 * time.Second

// taskVerifyBlocks has one node verify every block of its engine, and
// records what it found.
func (s *Service) taskVerifyBlocks(ctx context.Context, p *Plan, t *Task) error {
	i := slices.Index(p.Tasks, t)
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	sn := m.sn(argID(t, "sn"))
	if sn == nil {
		return permanent("%s is not deployed", snName(argID(t, "sn")))
	}
	rate, _ := strconv.ParseInt(t.Args["rate"], 10, 64)
	id, err := s.nextCheckID(ctx, p, i)
	if err != nil {
		return err
	}
	var last time.Time
	var failing time.Time // when polling the node began to fail, or zero
	for {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r, err := s.control(sn.Addr()).VerifyBlocks(rctx, &controlpb.VerifyBlocksRequest{Store: m.Store, Id: id, BytesPerSec: rate})
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && (failing.IsZero() || time.Since(failing) < 30*time.Second):
			if failing.IsZero() {
				failing = time.Now()
			}
		case err != nil:
			return fmt.Errorf("%s: %s", snName(sn.ID), taskError(err))
		case r.GetDone():
			return s.noteBlocksDone(ctx, p.ID, i, sn.ID, r)
		default:
			failing = time.Time{}
			if time.Since(last) >= progressEvery {
				last = time.Now()
				_ = s.noteTask(ctx, p.ID, i, func(t *Task) { t.Progress = blocksProgress(sn.ID, r) })
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func blocksProgress(sn uint64, r *controlpb.VerifyBlocksReply) string {
	return fmt.Sprintf("%s: %s of %s checked, %d of %d files", snName(sn), mb(r.GetBytesDone()), mb(r.GetBytes()), r.GetFilesDone(), r.GetFiles())
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// noteBlocksDone records a finished block check; an error that is not
// damage fails the attempt (the check can run again).
func (s *Service) noteBlocksDone(ctx context.Context, id, i int, sn uint64, r *controlpb.VerifyBlocksReply) error {
	if r.GetError() != "" {
		return fmt.Errorf("%s: block verification failed: %s", snName(sn), r.GetError())
	}
	took := (time.Duration(r.GetDurationMs()) * time.Millisecond).Round(time.Millisecond)
	line := fmt.Sprintf("%s: every block of %d %s (%s), the MANIFEST and the WALs checked in %s: no damage", snName(sn), r.GetFilesDone(),
		plural(int(r.GetFilesDone()), "sstable", "sstables"), mb(r.GetBytesDone()), took)
	if r.GetCorrupt() {
		file := r.GetFile()
		if file == "" {
			file = "its MANIFEST or a WAL"
		}
		line = fmt.Sprintf("%s: block damage in %s: %s (the node's engine is marked corrupt and refuses writes; a storage node heals by rebuilding its replicas from their peers)",
			snName(sn), file, r.GetDetail())
	}
	return stopUnlessInterrupted(s.noteTask(ctx, id, i, func(t *Task) {
		t.Result, t.Progress, t.Problem = []string{line}, "", r.GetCorrupt()
	}))
}

// taskVerifyReport fails the plan, naming what was found, if any task
// found something it did not repair.
func (s *Service) taskVerifyReport(ctx context.Context, p *Plan) error {
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	var found []string
	for _, t := range m.plan(p.ID).Tasks {
		if t.Problem {
			found = append(found, t.Result...)
		}
	}
	if len(found) > 0 {
		return permanent("verify-data found what it did not repair: %s", strings.Join(found, "; "))
	}
	return nil
}

// shardLeader returns the node that leads shard, asking the nodes of its
// replicas, or 0 if none says it leads.
func (s *Service) shardLeader(ctx context.Context, m *Meta, sh topology.Shard) (uint64, map[uint64]*controlpb.NodeInfo) {
	infos := s.describeAll(ctx, m)
	for _, r := range sh.Replicas {
		if isLeaderOf(infos[uint64(r)], uint64(sh.ID)) {
			return uint64(r), infos
		}
	}
	return 0, infos
}
