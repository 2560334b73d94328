package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A snapshot (snapshot create in the admin shell) leaves, on the node that
// led each shard when it was taken:
//
//	ROOT/snapshots/NAME/topology.json    the topology it was taken under
//	ROOT/snapshots/NAME/shard-S.json     {"store", "shard", "index", "topology_seq", "bytes", "created"}
//	ROOT/snapshots/NAME/shard-S.data     the shard's records at index (storage snapshot format)
//
// Restore (cairn sn restore) is offline and store-wide: every node of the
// store is stopped and restores each shard it hosts from the same files.
const snapshotsDir = "snapshots"

var snapshotNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

type shardBackup struct {
	Store       string    `json:"store"`
	Shard       uint64    `json:"shard"`
	Index       uint64    `json:"index"`
	TopologySeq uint64    `json:"topology_seq"`
	Bytes       uint64    `json:"bytes"`
	Created     time.Time `json:"created"`
}

func (c controlRPC) SnapshotShard(ctx context.Context, r *controlpb.SnapshotShardRequest) (*controlpb.SnapshotShardReply, error) {
	n := c.n
	if !snapshotNameRE.MatchString(r.GetName()) {
		return nil, status.Errorf(codes.InvalidArgument, "snapshot name %q: use letters, digits, '_', '.' or '-'", r.GetName())
	}
	t := n.topology()
	if t == nil || t.Store != r.GetStore() {
		return nil, status.Error(codes.FailedPrecondition, "this node holds no topology of that store")
	}
	rep := n.replica(r.GetShard())
	if rep == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "no running replica of shard %d here", r.GetShard())
	}
	if err := rep.ReadReady(ctx, replica.Consistency{Kind: replica.Absolute}); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "shard %d: %v", r.GetShard(), err)
	}
	data, index, err := replica.ShardSnapshot(rep)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "shard %d: %v", r.GetShard(), err)
	}
	dir := filepath.Join(n.cfg.Root, snapshotsDir, r.GetName())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tb, _ := json.MarshalIndent(t, "", "  ")
	meta, _ := json.MarshalIndent(shardBackup{Store: t.Store, Shard: r.GetShard(), Index: index, TopologySeq: t.Seq,
		Bytes: uint64(len(data)), Created: time.Now().UTC()}, "", "  ")
	base := filepath.Join(dir, fmt.Sprintf("shard-%d", r.GetShard()))
	for path, b := range map[string][]byte{filepath.Join(dir, topology.FileName): tb, base + ".data": data, base + ".json": meta} {
		if err := writeFileAtomic(path, b); err != nil {
			return nil, status.Errorf(codes.Internal, "writing %s: %v", path, err)
		}
	}
	n.log.Info("shard snapshot written", "shard", r.GetShard(), "index", index, "bytes", len(data), "dir", dir)
	return &controlpb.SnapshotShardReply{Index: index, Bytes: uint64(len(data)), Path: dir}, nil
}

func (c controlRPC) RemoveSnapshot(_ context.Context, r *controlpb.RemoveSnapshotRequest) (*controlpb.NodeInfo, error) {
	if !snapshotNameRE.MatchString(r.GetName()) {
		return nil, status.Errorf(codes.InvalidArgument, "snapshot name %q is not valid", r.GetName())
	}
	if err := os.RemoveAll(filepath.Join(c.n.cfg.Root, snapshotsDir, r.GetName())); err != nil {
		return nil, err
	}
	return c.n.describe(), nil
}

// RestoreConfig says what Restore restores.
type RestoreConfig struct {
	Root    string // the stopped node's root
	DataDir string // its engine (default ROOT/data)
	Name    string // the snapshot's name
	// From lists more places to look for shard files: other nodes' roots,
	// or directories holding NAME/ or the shard files themselves. The
	// node's own ROOT/snapshots comes first.
	From []string
	Out  io.Writer // progress lines
}

// Restore replaces the data of every shard this node hosts with the
// snapshot's, and resets each shard's Raft state to restart at the
// snapshot's index. Run it on every node of the store while all are
// stopped.
func Restore(cfg RestoreConfig) error {
	if !snapshotNameRE.MatchString(cfg.Name) {
		return fmt.Errorf("snapshot: %q is not a snapshot name", cfg.Name)
	}
	t, err := topology.Load(filepath.Join(cfg.Root, topology.FileName))
	if err != nil {
		return fmt.Errorf("%w (restore needs the node's topology: is %s a deployed node's root?)", err, cfg.Root)
	}
	m, ok, err := loadMembership(cfg.Root)
	if err != nil || !ok {
		return fmt.Errorf("restore: %s has no %s: only nodes deployed by the admin can be restored (%v)", cfg.Root, membershipFile, err)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(cfg.Root, "data")
	}
	e, err := storage.Open(storage.DefaultConfig(cfg.DataDir))
	if err != nil {
		return fmt.Errorf("restore: opening %s: %w (is the node still running? stop it first)", cfg.DataDir, err)
	}
	defer e.Close()
	if _, err := e.Init(t.Store, t.Partitions); err != nil {
		return err
	}
	for _, s := range t.ShardsOn(m.SN) {
		if err := restoreShard(cfg, e, t, s); err != nil {
			return err
		}
	}
	return nil
}

func restoreShard(cfg RestoreConfig, e *storage.Engine, t *topology.Topology, s topology.Shard) error {
	dir, meta, err := findShardBackup(cfg, s.ID)
	if err != nil {
		return err
	}
	if meta.Store != t.Store || meta.TopologySeq != t.Seq {
		return fmt.Errorf("restore: %s is of store %q topology #%d; this node runs %q topology #%d", dir, meta.Store, meta.TopologySeq, t.Store, t.Seq)
	}
	data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("shard-%d.data", s.ID)))
	if err != nil {
		return err
	}
	voters := make([]uint64, len(s.Replicas))
	for i, r := range s.Replicas {
		voters[i] = uint64(r)
	}
	spans := storage.PartitionSpans(t.PartitionsOf(s.ID), t.Partitions)
	if err := replica.RestoreShard(e, uint64(s.ID), voters, spans, data, meta.Index); err != nil {
		return fmt.Errorf("restore: shard %d: %w", s.ID, err)
	}
	fmt.Fprintf(cfg.Out, "restored %s from %s (index %d, %d bytes)\n", topology.ShardName(s.ID), dir, meta.Index, len(data))
	return nil
}

// findShardBackup looks for shard-S.json under the candidate directories.
func findShardBackup(cfg RestoreConfig, shard topology.ShardID) (string, shardBackup, error) {
	var meta shardBackup
	var dirs []string
	for _, base := range append([]string{cfg.Root}, cfg.From...) {
		dirs = append(dirs, filepath.Join(base, snapshotsDir, cfg.Name), filepath.Join(base, cfg.Name), base)
	}
	file := fmt.Sprintf("shard-%d.json", shard)
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, file))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return "", meta, err
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			return "", meta, fmt.Errorf("restore: %s is corrupt: %w", filepath.Join(d, file), err)
		}
		return d, meta, nil
	}
	return "", meta, fmt.Errorf("restore: snapshot %s has no file for shard %d in %v; the shard's leader kept it: pass that node's root with --from", cfg.Name, shard, dirs)
}
