package node

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// A snapshot taken under an older topology than the node runs now (the
// store grew, shrank, rebalanced or split its partitions since) is restored
// by re-sharding it (storage.Reshard): each shard the node hosts now is
// built from the snapshot's shards that held its partitions then, found and
// verified like any other copy. A shard whose partitions did not move is
// built from its own file, so the nodes that hosted it then need no
// --from; a node that hosts partitions other shards held then needs their
// files (--from the root of a node that held them).
//
// The snapshot's topology (ROOT/snapshots/NAME/topology.json) says which
// shard held each old partition, and each source's own partition table
// must agree: a snapshot taken while a plan moved partitions may hold a
// partition in no shard or in two, and is refused. Records keep their
// versions; the new shard's table records, for each partition that came
// from another shard, that shard's origin and the snapshot's index there,
// so a read at a version made before the snapshot is served (as after a
// partition move).

// restoreSource is one snapshot shard feeding a shard's restore.
type restoreSource struct {
	shard topology.ShardID
	found foundBackup
	keep  func(hash uint64) bool // nil: all of it (the same topology)
}

// shardRestore is what restoring one of the node's shards takes.
type shardRestore struct {
	shard   topology.Shard
	sources []restoreSource
	table   *storage.PartitionTable // nil: the data's own
	seq     uint64                  // the snapshot's topology
}

// planRestores finds and verifies every file each of the node's shards
// will be restored from, before anything is changed.
func planRestores(cfg RestoreConfig, t *topology.Topology, shards []topology.Shard) ([]shardRestore, error) {
	snapT, err := findSnapshotTopology(cfg, t)
	if err != nil {
		return nil, err
	}
	plans := make([]shardRestore, len(shards))
	for i, s := range shards {
		if snapT.Seq == t.Seq {
			f, err := findShardBackup(cfg, t, s.ID)
			if err != nil {
				return nil, err
			}
			plans[i] = shardRestore{shard: s, sources: []restoreSource{{shard: s.ID, found: f}}}
			continue
		}
		if plans[i], err = planReshard(cfg, t, snapT, s); err != nil {
			return nil, err
		}
	}
	return plans, nil
}

// findSnapshotTopology reads the topology the snapshot was taken under:
// the first topology.json of the store among the places restore looks
// that hold shard files too (a node's root holds its own topology.json).
func findSnapshotTopology(cfg RestoreConfig, t *topology.Topology) (*topology.Topology, error) {
	dirs := backupDirs(cfg)
	var bad errList
	for _, d := range dirs {
		if !holdsShardFiles(cfg.fs(), d) {
			continue
		}
		snapT, err := loadTopology(cfg.fs(), filepath.Join(d, topology.FileName))
		switch {
		case err == nil && snapT.Store == t.Store && snapT.Seq <= t.Seq:
			return snapT, nil
		case err == nil && snapT.Store != t.Store:
			err = fmt.Errorf("%s is of store %q; this node runs %q", d, snapT.Store, t.Store)
		case err == nil:
			err = fmt.Errorf("%s was taken under topology #%d, newer than this node's #%d: start the node so that it learns the store's topology, stop it, and restore again", d, snapT.Seq, t.Seq)
		case files.IsNotExist(err):
			continue
		}
		bad = append(bad, err)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("restore: snapshot %s: %w", cfg.Name, bad)
	}
	return nil, inputErrorf("restore: this node holds no copy of snapshot %s (looked in %s): it was not reached when the snapshot was taken, or joined the store later; pass the root of a node that holds it with --from", cfg.Name, strings.Join(dirs, ", "))
}

// holdsShardFiles reports whether dir holds some shard-S.json.
func holdsShardFiles(fs files.FS, dir string) bool {
	names, err := fs.List(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(names, func(n string) bool {
		return strings.HasPrefix(n, "shard-") && strings.HasSuffix(n, ".json")
	})
}

// planReshard plans shard s of topology t, built from the snapshot's
// shards (of topology snapT) that held its partitions.
func planReshard(cfg RestoreConfig, t, snapT *topology.Topology, s topology.Shard) (shardRestore, error) {
	if t.Partitions == 0 || snapT.Partitions == 0 {
		return shardRestore{}, fmt.Errorf("restore: topology #%d or #%d has no partitions", snapT.Seq, t.Seq)
	}
	mine := map[keys.PartitionID]bool{}
	for _, p := range t.PartitionsOf(s.ID) {
		mine[p] = true
	}
	feeds := oldPartitions(t, snapT, s.ID) // old partition -> new partitions it feeds
	bySource := map[topology.ShardID][]keys.PartitionID{}
	for p1 := range feeds {
		o := snapT.ShardFor(p1)
		bySource[o] = append(bySource[o], p1)
	}
	plan := shardRestore{shard: s, seq: snapT.Seq, table: &storage.PartitionTable{N: t.Partitions, Parts: map[uint32]*storage.PartEntry{}}}
	for p := range mine {
		plan.table.Parts[uint32(p)] = &storage.PartEntry{State: storage.PartOwned}
	}
	for _, o := range slices.Sorted(maps.Keys(bySource)) {
		src, err := planSource(cfg, t, snapT, s, o, bySource[o], mine)
		if err != nil {
			return shardRestore{}, err
		}
		if err := noteVersions(cfg, snapT, s, src, bySource[o], feeds, plan.table); err != nil {
			return shardRestore{}, err
		}
		plan.sources = append(plan.sources, src)
	}
	return plan, nil
}

// oldPartitions maps each partition of topology snapT whose hashes shard
// s owns in topology t to the partitions of t it overlaps.
func oldPartitions(t, snapT *topology.Topology, s topology.ShardID) map[keys.PartitionID][]keys.PartitionID {
	out := map[keys.PartitionID][]keys.PartitionID{}
	for _, p2 := range t.PartitionsOf(s) {
		lo, _ := keys.PartitionStart(p2, t.Partitions)
		hi := uint64(math.MaxUint64)
		if next, ok := keys.PartitionStart(p2+1, t.Partitions); ok {
			hi = next - 1
		}
		for p1 := keys.PartitionOf(lo, snapT.Partitions); p1 <= keys.PartitionOf(hi, snapT.Partitions); p1++ {
			out[p1] = append(out[p1], p2)
		}
	}
	return out
}

// planSource finds and verifies the file of snapshot shard o, and checks
// that o served, when it was taken, the old partitions s takes from it.
func planSource(cfg RestoreConfig, t, snapT *topology.Topology, s topology.Shard, o topology.ShardID, old []keys.PartitionID, mine map[keys.PartitionID]bool) (restoreSource, error) {
	f, err := findShardBackup(cfg, snapT, o)
	if err != nil {
		return restoreSource{}, fmt.Errorf("%w\n(%s is built from %s of the snapshot, taken under topology #%d; %s held it then)",
			err, topology.ShardName(s.ID), topology.ShardName(o), snapT.Seq, holders(snapT, o))
	}
	table, err := sourceTable(cfg, f, o)
	if err != nil {
		return restoreSource{}, err
	}
	for _, p1 := range old {
		if table != nil && (table.N != snapT.Partitions || table.ServesPartition(uint64(o), uint32(p1)) != nil) {
			return restoreSource{}, fmt.Errorf("restore: snapshot %s: %s did not serve partition %d when it was taken (a plan was moving partitions): restore from a snapshot taken while no plan ran", cfg.Name, topology.ShardName(o), p1)
		}
	}
	n1, n2 := snapT.Partitions, t.Partitions
	keep := func(h uint64) bool {
		return snapT.ShardFor(keys.PartitionOf(h, n1)) == o && mine[keys.PartitionOf(h, n2)]
	}
	f.table = table
	return restoreSource{shard: o, found: f, keep: keep}, nil
}

// sourceTable reads the partition table a snapshot shard's data carries.
func sourceTable(cfg RestoreConfig, f foundBackup, o topology.ShardID) (*storage.PartitionTable, error) {
	file, err := cfg.fs().Open(shardFileBase(f.dir, uint64(o)) + ".data")
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	defer file.Close()
	table, err := storage.SnapshotTable(file)
	if err != nil {
		return nil, fmt.Errorf("restore: %s in %s: %w", topology.ShardName(o), f.dir, err)
	}
	return table, nil
}

// noteVersions records in table, for each new partition fed by source
// shard o's old partitions, the versions those records carry: o's own up
// to the snapshot's index there (when o is another shard), and those o's
// table listed for partitions that had moved to it.
func noteVersions(cfg RestoreConfig, snapT *topology.Topology, s topology.Shard, src restoreSource, old []keys.PartitionID, feeds map[keys.PartitionID][]keys.PartitionID, table *storage.PartitionTable) error {
	was, ok := snapT.Shard(src.shard)
	if !ok {
		return fmt.Errorf("restore: snapshot %s: its topology lacks %s", cfg.Name, topology.ShardName(src.shard))
	}
	for _, p1 := range old {
		for _, p2 := range feeds[p1] {
			e := table.Parts[uint32(p2)]
			if was.Origin != s.Origin {
				addVersion(e, was.Origin, src.found.meta.Index)
			}
			if src.found.table != nil && src.found.table.Parts[uint32(p1)] != nil {
				for origin, through := range src.found.table.Parts[uint32(p1)].Versions {
					addVersion(e, origin, through)
				}
			}
		}
	}
	return nil
}

func addVersion(e *storage.PartEntry, origin, through uint64) {
	if e.Versions == nil {
		e.Versions, e.Since = map[uint64]uint64{}, 1
	}
	e.Versions[origin] = max(e.Versions[origin], through)
}

// holders names the nodes of topology t that hosted shard o.
func holders(t *topology.Topology, o topology.ShardID) string {
	s, _ := t.Shard(o)
	var names []string
	for _, id := range s.Replicas {
		n, _ := t.Node(id)
		names = append(names, fmt.Sprintf("%s at %s", topology.NodeName(id), n.Addr))
	}
	return strings.Join(names, ", ")
}

// restoreResharded streams the shard's data, re-sharded from its sources'
// files (each checked again as it is read), into the engine.
func restoreResharded(cfg RestoreConfig, e *storage.Engine, r shardRestore) error {
	var sources []storage.ReshardSource
	var index uint64
	var from []string
	for _, src := range r.sources {
		path := shardFileBase(src.found.dir, uint64(src.shard)) + ".data"
		file, err := cfg.fs().Open(path)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		defer file.Close()
		data := &checkReader{r: file, h: crc32.New(castagnoli), meta: src.found.meta, path: path}
		sources = append(sources, storage.ReshardSource{Data: data, Keep: src.keep})
		index = max(index, src.found.meta.Index)
		from = append(from, fmt.Sprintf("%s of topology #%d in %s (index %d, crc32c %s)", topology.ShardName(src.shard), r.seq, src.found.dir, src.found.meta.Index, checksumText(src.found.meta)))
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := storage.Reshard(pw, uint64(r.shard.ID), r.table, sources)
		pw.CloseWithError(err)
		done <- err
	}()
	err := replica.RestoreShard(e, uint64(r.shard.ID), voters(r.shard), storage.ShardDataSpans(uint64(r.shard.ID)), pr, index)
	pr.CloseWithError(errors.New("restore ended"))
	if rerr := <-done; err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("restore: shard %d: %w", r.shard.ID, err)
	}
	fmt.Fprintf(cfg.Out, "restored %s, re-sharded from %s\n", topology.ShardName(r.shard.ID), strings.Join(from, ", "))
	return nil
}

func voters(s topology.Shard) []uint64 {
	out := make([]uint64, len(s.Replicas))
	for i, r := range s.Replicas {
		out[i] = uint64(r)
	}
	return out
}
