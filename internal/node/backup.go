package node

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A snapshot (snapshot create in the admin shell) is written by each
// shard's leader and then copied (CopySnapshot, backup_copy.go) to every
// other node hosting a replica of the shard, so that each node holds the
// files of every shard it hosts:
//
//	ROOT/snapshots/NAME/topology.json    the topology it was taken under (a checked file)
//	ROOT/snapshots/NAME/shard-S.json     what shard-S.data is (a checked file, below)
//	ROOT/snapshots/NAME/shard-S.data     the shard's records at index (storage snapshot format)
//
// shard-S.json, a checked file (package storage/files) whose data is:
//
//	{
//	  "store":        "kvstore",    the store's name
//	  "shard":        1,            S
//	  "index":        17087,        the Raft index the data is at
//	  "topology_seq": 1,            the topology's sequence number
//	  "bytes":        5712732,      the length of shard-S.data
//	  "crc32c":       "1c2e6f0a",   CRC-32C (Castagnoli) of shard-S.data,
//	                                8 lowercase hex digits; absent in
//	                                snapshots taken before copies existed
//	  "created":      "2026-...Z"   when the leader wrote it (UTC)
//	}
//
// Every file is written to a temporary name, synced and renamed; a shard's
// .json is renamed last, so a .json names complete data. Restore checks the
// data's length and checksum against the .json and refuses a mismatch, or
// a .json that fails its own checksum (ErrCorruptSnapshot).
//
// Restore (cairn sn restore) is offline and store-wide: every node of the
// store is stopped and restores each shard it hosts from the same snapshot,
// its own copy first, then any --from places.
const snapshotsDir = "snapshots"

var snapshotNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// ErrCorruptSnapshot is returned (wrapped) when a snapshot file does not
// match its shard-S.json (wrong length or checksum), or a shard-S.json is
// corrupt (also files.ErrCorrupt). It is never retried; another copy
// (restore --from) may be good.
var ErrCorruptSnapshot = errors.New("node: corrupt snapshot file")

// ErrRestoreInput is returned (wrapped) by Restore for input to fix: a
// root that does not exist or is not a deployed node's, a malformed
// snapshot name, or a snapshot of which no place given holds a shard.
var ErrRestoreInput = errors.New("node: restore: bad input")

// restoreInput is an error of Restore that wraps ErrRestoreInput, with
// its own message.
type restoreInput struct{ msg string }

func (e *restoreInput) Error() string { return e.msg }
func (e *restoreInput) Unwrap() error { return ErrRestoreInput }

func inputErrorf(format string, args ...any) error {
	return &restoreInput{msg: fmt.Sprintf(format, args...)}
}

// castagnoli is the CRC-32C table of snapshot checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// shardBackup is shard-S.json.
type shardBackup struct {
	Store       string    `json:"store"`
	Shard       uint64    `json:"shard"`
	Index       uint64    `json:"index"`
	TopologySeq uint64    `json:"topology_seq"`
	Bytes       uint64    `json:"bytes"`
	CRC32C      string    `json:"crc32c,omitempty"`
	Created     time.Time `json:"created"`
}

// crcHex formats a CRC-32C as shard-S.json holds it.
func crcHex(sum uint32) string { return fmt.Sprintf("%08x", sum) }

// shardFileBase returns DIR/shard-S, to which .json and .data are added.
func shardFileBase(dir string, shard uint64) string {
	return filepath.Join(dir, fmt.Sprintf("shard-%d", shard))
}

// check compares the length and checksum of path's contents with the
// .json's; it fails with ErrCorruptSnapshot, naming path, on a mismatch.
func (b shardBackup) check(path string, size uint64, sum uint32) error {
	if size != b.Bytes {
		return fmt.Errorf("%w: %s: %d bytes, expected %d (shard-%d.json)", ErrCorruptSnapshot, path, size, b.Bytes, b.Shard)
	}
	if b.CRC32C != "" && crcHex(sum) != b.CRC32C {
		return fmt.Errorf("%w: %s: crc32c %s, expected %s (shard-%d.json)", ErrCorruptSnapshot, path, crcHex(sum), b.CRC32C, b.Shard)
	}
	return nil
}

// verifyData reads the data file at path and checks it against b.
func (b shardBackup) verifyData(fs files.FS, path string) error {
	f, err := fs.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return b.check(path, uint64(n), h.Sum32())
}

// readShardBackup reads and verifies DIR/shard-S.json.
func readShardBackup(fs files.FS, dir string, shard uint64) (shardBackup, error) {
	var b shardBackup
	err := files.ReadJSON(fs, shardFileBase(dir, shard)+".json", &b)
	if errors.Is(err, files.ErrCorrupt) {
		return b, fmt.Errorf("%w: %w", ErrCorruptSnapshot, err)
	}
	return b, err
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
	release, err := n.enter() // the engine stays open while the snapshot reads it
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "shard %d: %v", r.GetShard(), err)
	}
	defer release()
	rep := n.replica(r.GetShard())
	if rep == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "no running replica of shard %d here", r.GetShard())
	}
	if err := rep.ReadReady(ctx, replica.Consistency{Kind: replica.Absolute}); err != nil {
		code := codes.FailedPrecondition
		if nl := (*replica.NotLeaderError)(nil); errors.As(err, &nl) && nl.Leader == 0 {
			code = codes.Unavailable // an election is under way: ask again once it ends
		}
		return nil, status.Errorf(code, "shard %d: %v", r.GetShard(), err)
	}
	x, err := replica.ShardSnapshot(rep)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "shard %d: %v", r.GetShard(), err)
	}
	defer x.Close()
	start := time.Now()
	meta := shardBackup{Store: t.Store, Shard: r.GetShard(), Index: x.Applied(), TopologySeq: t.Seq, Created: time.Now().UTC()}
	dir := filepath.Join(n.cfg.Root, snapshotsDir, r.GetName())
	write := func(w io.Writer) error { _, err := x.WriteTo(w); return err }
	if err := writeShardFiles(n.cfg.FS, dir, &meta, t, write, false); err != nil {
		return nil, status.Errorf(codes.Internal, "shard %d: %v", r.GetShard(), err)
	}
	n.log.Info("shard snapshot written", "shard", r.GetShard(), "index", meta.Index, "bytes", meta.Bytes, "dir", dir, "took", time.Since(start))
	return &controlpb.SnapshotShardReply{Index: meta.Index, Bytes: meta.Bytes, Path: dir, Crc32C: meta.CRC32C}, nil
}

// writeShardFiles writes a shard's snapshot files into dir: topology.json,
// then shard-S.data (streamed from data), then shard-S.json. A copy
// (check) must match meta's length and checksum before it goes into place;
// the leader's own write fills them in. An older shard-S.json is removed
// just before the new data goes into place, so no .json ever names data it
// was not written for, and a write that fails leaves an older copy as it
// was.
func writeShardFiles(fs files.FS, dir string, meta *shardBackup, t *topology.Topology, data func(io.Writer) error, check bool) error {
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := files.WriteJSON(fs, filepath.Join(dir, topology.FileName), t); err != nil {
		return err
	}
	base := shardFileBase(dir, meta.Shard)
	tmp, err := files.WriteTemp(fs, base+".data", func(w io.Writer) error {
		h := crc32.New(castagnoli)
		what := "the data received for " + base + ".data"
		cw := &countWriter{w: io.MultiWriter(w, h), limit: meta.Bytes, what: what}
		if !check {
			cw.limit = math.MaxUint64
		}
		if err := data(cw); err != nil {
			return err
		}
		if !check {
			meta.Bytes, meta.CRC32C = cw.n, crcHex(h.Sum32())
			return nil
		}
		return meta.check(what, cw.n, h.Sum32())
	})
	if err != nil {
		return err
	}
	if err := fs.Remove(base + ".json"); err != nil && !files.IsNotExist(err) {
		_ = fs.Remove(tmp)
		return err
	}
	if err := files.CommitTemp(fs, tmp, base+".data"); err != nil {
		return err
	}
	return files.WriteJSON(fs, base+".json", meta)
}

// countWriter counts the bytes written through it, and refuses (with
// ErrCorruptSnapshot, naming what) a write that would take it past limit,
// so oversize data fails before it fills the disk.
type countWriter struct {
	w     io.Writer
	n     uint64
	limit uint64
	what  string
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.n+uint64(len(p)) > c.limit {
		return 0, fmt.Errorf("%w: %s: more than the %d bytes expected", ErrCorruptSnapshot, c.what, c.limit)
	}
	n, err := c.w.Write(p)
	c.n += uint64(n)
	return n, err
}

func (c controlRPC) RemoveSnapshot(_ context.Context, r *controlpb.RemoveSnapshotRequest) (*controlpb.NodeInfo, error) {
	if !snapshotNameRE.MatchString(r.GetName()) {
		return nil, status.Errorf(codes.InvalidArgument, "snapshot name %q is not valid", r.GetName())
	}
	if err := c.n.cfg.FS.RemoveAll(filepath.Join(c.n.cfg.Root, snapshotsDir, r.GetName())); err != nil {
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
	// FS is the file system the node's files and engine go through.
	// Default files.Default.
	FS files.FS
	// Logger receives the engine's log lines (warnings about its files).
	// Default slog.Default().
	Logger *slog.Logger
}

// Restore replaces the data of every shard this node hosts with the
// snapshot's, and resets each shard's Raft state to restart at the
// snapshot's index. Run it on every node of the store while all are
// stopped. It first finds and verifies a copy of every shard, so a missing
// or corrupt file fails it before any shard is touched.
func Restore(cfg RestoreConfig) error {
	if !snapshotNameRE.MatchString(cfg.Name) {
		return inputErrorf("restore: %q is not a snapshot name (snapshot list shows them)", cfg.Name)
	}
	cfg.FS = cfg.fs()
	if fi, err := cfg.FS.Stat(cfg.Root); err != nil || !fi.IsDir() {
		return inputErrorf("restore: the root %s does not exist or is not a directory: give the stopped node's directory", cfg.Root)
	}
	t, err := loadTopology(cfg.FS, filepath.Join(cfg.Root, topology.FileName))
	switch {
	case files.IsNotExist(err):
		return inputErrorf("restore: %s has no %s: restore needs the node's topology; is %s a deployed node's root?", cfg.Root, topology.FileName, cfg.Root)
	case err != nil:
		return fmt.Errorf("restore: %w (restore needs the node's topology)", err)
	}
	m, ok, err := loadMembership(cfg.FS, cfg.Root)
	switch {
	case err != nil:
		return fmt.Errorf("restore: %w", err)
	case !ok:
		return inputErrorf("restore: %s has no %s: only nodes deployed by the admin can be restored", cfg.Root, membershipFile)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(cfg.Root, "data")
	}
	sc := storage.DefaultConfig(cfg.DataDir)
	sc.FS = cfg.FS
	sc.Logger = cfg.Logger
	sc.RowCacheBytes = 0 // restore reads no records: no row cache
	e, err := storage.Open(sc)
	if err != nil {
		return fmt.Errorf("restore: opening %s: %w (is the node still running? stop it first)", cfg.DataDir, err)
	}
	defer e.Close()
	plans, err := planRestores(cfg, t, t.ShardsOn(m.SN))
	if err != nil {
		return err
	}
	if _, err := e.Init(t.Store, t.Partitions); err != nil {
		return err
	}
	for _, r := range plans {
		if r.table != nil {
			err = restoreResharded(cfg, e, r)
		} else {
			err = restoreShard(cfg, e, r.shard, r.sources[0].found)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c RestoreConfig) fs() files.FS {
	if c.FS == nil {
		return files.Default
	}
	return c.FS
}

// foundBackup is a verified copy of one shard's snapshot.
type foundBackup struct {
	dir   string
	meta  shardBackup
	table *storage.PartitionTable // the data's, when re-sharding
}

// restoreShard streams the shard's verified data file into the engine. The
// file is checked again as it is read: a file that changed since it was
// verified fails the restore before anything is installed.
func restoreShard(cfg RestoreConfig, e *storage.Engine, s topology.Shard, f foundBackup) error {
	path := shardFileBase(f.dir, uint64(s.ID)) + ".data"
	file, err := cfg.fs().Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	data := &checkReader{r: file, h: crc32.New(castagnoli), meta: f.meta, path: path}
	spans := storage.ShardDataSpans(uint64(s.ID))
	if err := replica.RestoreShard(e, uint64(s.ID), voters(s), spans, data, f.meta.Index); err != nil {
		if errors.Is(err, ErrCorruptSnapshot) {
			err = fmt.Errorf("%w (it changed since it was verified)", err)
		}
		return fmt.Errorf("restore: shard %d: %w", s.ID, err)
	}
	fmt.Fprintf(cfg.Out, "restored %s from %s (index %d, %d bytes, crc32c %s)\n",
		topology.ShardName(s.ID), f.dir, f.meta.Index, data.n, checksumText(f.meta))
	return nil
}

// checkReader reads a snapshot data file, and at its end checks its length
// and checksum against the shard's .json: a mismatch is the error that
// ends it instead of io.EOF.
type checkReader struct {
	r    io.Reader
	h    hash.Hash32
	n    uint64
	meta shardBackup
	path string
}

func (c *checkReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n += uint64(n)
	if errors.Is(err, io.EOF) {
		if cerr := c.meta.check(c.path, c.n, c.h.Sum32()); cerr != nil {
			return n, cerr
		}
	}
	return n, err
}

// checksumText is the crc32c of b, or says that it has none.
func checksumText(b shardBackup) string {
	if b.CRC32C == "" {
		return "none recorded"
	}
	return b.CRC32C + " ok"
}

// backupDirs lists where restore looks for a shard's files, in order: the
// node's own ROOT/snapshots/NAME, then for each --from place P:
// P/snapshots/NAME, P/NAME and P itself.
func backupDirs(cfg RestoreConfig) []string {
	var dirs []string
	for _, base := range append([]string{cfg.Root}, cfg.From...) {
		dirs = append(dirs, filepath.Join(base, snapshotsDir, cfg.Name), filepath.Join(base, cfg.Name), base)
	}
	return dirs
}

// findShardBackup returns the first copy of the shard's files, in
// backupDirs order, that is of this store and topology and whose data
// matches its .json, and says on cfg.Out which copies it passed over. With
// no good copy it fails, naming each bad one (wrapping ErrCorruptSnapshot
// when one was corrupt).
func findShardBackup(cfg RestoreConfig, t *topology.Topology, shard topology.ShardID) (foundBackup, error) {
	dirs := backupDirs(cfg)
	var bad errList
	for _, d := range dirs {
		meta, err := readShardBackup(cfg.fs(), d, uint64(shard))
		if files.IsNotExist(err) {
			continue
		}
		if err == nil {
			err = checkBackupOf(d, meta, t)
		}
		if err == nil {
			err = meta.verifyData(cfg.fs(), shardFileBase(d, uint64(shard))+".data")
		}
		if err != nil {
			bad = append(bad, err)
			continue
		}
		for _, e := range bad {
			fmt.Fprintf(cfg.Out, "passed over a bad copy of %s: %v\n", topology.ShardName(shard), e)
		}
		return foundBackup{dir: d, meta: meta}, nil
	}
	if len(bad) > 0 {
		return foundBackup{}, fmt.Errorf("restore: shard %d: no good copy of snapshot %s: %w; pass a place holding a good copy with --from", shard, cfg.Name, bad)
	}
	return foundBackup{}, inputErrorf("restore: snapshot %s has no file for shard %d in %v; this node was not reached when it was taken (snapshot list names such nodes): pass the root of a node that holds it with --from", cfg.Name, shard, dirs)
}

// errList is several errors, shown on one line.
type errList []error

func (l errList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

func (l errList) Unwrap() []error { return l }

// checkBackupOf refuses a copy taken of another store or topology.
func checkBackupOf(dir string, meta shardBackup, t *topology.Topology) error {
	if meta.Store != t.Store || meta.TopologySeq != t.Seq {
		return fmt.Errorf("%s is of store %q topology #%d; this node runs %q topology #%d", dir, meta.Store, meta.TopologySeq, t.Store, t.Seq)
	}
	return nil
}
