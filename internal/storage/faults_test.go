package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

const faultDir = "/db"

// memConfig is an engine config on fs with small memtables, so a few
// hundred records make several sstables.
func memConfig(fs vfs.FS) Config {
	cfg := DefaultConfig(faultDir)
	cfg.FS = fs
	cfg.CacheBytes, cfg.MemTableBytes, cfg.MinFreeBytes = 1<<20, 1<<20, 0
	cfg.CheckpointInterval = -1
	cfg.BootID = func() string { return "boot-1" }
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Fatal = func(err error) { panic(fmt.Sprintf("unexpected fatal storage error: %v", err)) }
	return cfg
}

func recKey(i int) string { return fmt.Sprintf("/r%05d/-/v", i) }

func recValue(i int) string { return strings.Repeat(fmt.Sprintf("%05d", i), 100) }

// fill writes records [from, to), flushing every 100 so the engine holds
// several sstables, and leaves the last ones in the WAL and memtable.
func fill(t *testing.T, e *Engine, a *applier, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		a.apply(1, []*cairnpb.Operation{putOp(recKey(i), recValue(i), 0, nil)}, WriteNoSync)
		if i%100 == 99 && i+50 < to {
			if err := e.db.Load().Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkAll reads records [0, n): every one must be there with its value,
// unless the read fails as corruption (which must then be marked). It
// returns how many reads failed as corruption.
func checkAll(t *testing.T, e *Engine, n int) (corrupt int) {
	t.Helper()
	for i := 0; i < n; i++ {
		k, _ := keys.Parse(recKey(i))
		r, ok, err := e.Get(k, 1)
		switch {
		case errors.Is(err, ErrCorrupt):
			if e.Corrupt() == nil {
				t.Fatalf("record %d: %v, but the engine is not marked corrupt", i, err)
			}
			corrupt++
		case err != nil:
			t.Fatalf("record %d: %v", i, err)
		case !ok:
			t.Fatalf("record %d is silently missing", i)
		case string(r.Value) != recValue(i):
			t.Fatalf("record %d has another value", i)
		}
	}
	return corrupt
}

// baseImage builds a store of n records on a crashable MemFS, closed
// cleanly (clean) or left open as by a crash (the WAL holds the last
// records).
func baseImage(t *testing.T, n int, clean bool) *vfs.MemFS {
	t.Helper()
	fs := vfs.NewCrashableMem()
	e, err := Open(memConfig(fs))
	if err != nil {
		t.Fatal(err)
	}
	fill(t, e, &applier{t: t, e: e}, 0, n)
	if clean {
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	e.fs.needSync.Add(1) // the crash keeps what a SYNC commit would
	if err := e.db.Load().LogData([]byte("sync"), nil); err != nil {
		t.Fatal(err)
	}
	e.fs.needSync.Add(-1)
	return fs.CrashClone(vfs.CrashCloneCfg{})
}

// crashImage writes flushed records [0, flushed), then records [flushed,
// n) that stay in the WAL, and returns the files a crash leaves.
func crashImage(t *testing.T, flushed, n int) *vfs.MemFS {
	t.Helper()
	fs := vfs.NewCrashableMem()
	e, err := Open(memConfig(fs))
	if err != nil {
		t.Fatal(err)
	}
	a := &applier{t: t, e: e}
	fill(t, e, a, 0, flushed)
	if err := e.db.Load().Flush(); err != nil {
		t.Fatal(err)
	}
	for i := flushed; i < n; i++ {
		a.apply(1, []*cairnpb.Operation{putOp(recKey(i), recValue(i), 0, nil)}, Sync)
	}
	return fs.CrashClone(vfs.CrashCloneCfg{})
}

func copyFS(fs *vfs.MemFS) *vfs.MemFS {
	return fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(1, 1))})
}

func flip(t *testing.T, fs vfs.FS, name string, at int64, mask byte) {
	t.Helper()
	f, err := fs.OpenReadWrite(path.Join(faultDir, name), vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{0}
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= mask
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, fs vfs.FS, name string) int64 {
	t.Helper()
	fi, err := fs.Stat(path.Join(faultDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// kindOf names the kind of a file in the engine's directory.
func kindOf(name string) string {
	switch {
	case strings.HasPrefix(name, "MANIFEST-"):
		return "MANIFEST"
	case strings.HasSuffix(name, ".log"):
		return "WAL"
	case strings.HasSuffix(name, ".sst"):
		return "sstable"
	case strings.HasPrefix(name, "OPTIONS-"):
		return "OPTIONS"
	case name == stateFileName:
		return "state"
	}
	return ""
}

// TestCorruptionMatrix flips bytes in every kind of file the engine has
// (MANIFEST, WAL, sstable, OPTIONS, its state file), after a clean stop
// and after a crash. Each flip must be harmless, refused at open with the
// file named, or found as corruption by the read that meets it (and by
// VerifyBlocks) — never a store that opens and silently lacks records.
func TestCorruptionMatrix(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 9))
	const n = 600
	outcomes := map[string]map[string]int{}
	for _, clean := range []bool{true, false} {
		base := baseImage(t, n, clean)
		names, _ := base.List(faultDir)
		slices.Sort(names)
		for _, name := range names {
			kind := kindOf(name)
			if kind == "" {
				continue
			}
			size := fileSize(t, base, name)
			if size == 0 {
				continue
			}
			for trial := 0; trial < 6; trial++ {
				at := rng.Int64N(size)
				if trial == 0 {
					at = size / 2 // the probe's case: the middle of the file
				}
				fs := copyFS(base)
				flip(t, fs, name, at, byte(1+rng.IntN(255)))
				got := openAndCheck(t, fs, name, n)
				if outcomes[kind] == nil {
					outcomes[kind] = map[string]int{}
				}
				outcomes[kind][got]++
			}
		}
	}
	for kind, o := range outcomes {
		t.Logf("%-8s %v", kind, o)
	}
	for _, kind := range []string{"MANIFEST", "WAL", "sstable", "OPTIONS", "state"} {
		if outcomes[kind] == nil {
			t.Errorf("no %s file was tried", kind)
		}
	}
}

// openAndCheck opens the engine on fs after name was damaged and says what
// happened: "refused", "harmless" or "found".
func openAndCheck(t *testing.T, fs vfs.FS, name string, n int) string {
	t.Helper()
	cfg := memConfig(fs)
	e, err := Open(cfg)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s damaged: open failed without ErrCorrupt: %v", name, err)
		}
		if !strings.Contains(err.Error(), name) && !strings.Contains(err.Error(), "checkpoint") {
			t.Fatalf("%s damaged: the refusal does not name it: %v", name, err)
		}
		return "refused"
	}
	defer e.Close()
	found := checkAll(t, e, n)
	if found == 0 {
		if err := e.VerifyBlocks(t.Context(), 0, nil); err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s damaged: scrub says %v", name, err)
			}
			return "found"
		}
		return "harmless"
	}
	return "found"
}

// TestOpenRefusesMissingSSTable: a file the MANIFEST names is gone.
func TestOpenRefusesMissingSSTable(t *testing.T) {
	fs := baseImage(t, 400, true)
	names, _ := fs.List(faultDir)
	var sst string
	for _, n := range names {
		if strings.HasSuffix(n, ".sst") {
			sst = n
		}
	}
	if err := fs.Remove(path.Join(faultDir, sst)); err != nil {
		t.Fatal(err)
	}
	before, _ := fs.List(faultDir)
	_, err := Open(memConfig(fs))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), sst) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("open with %s gone: %v", sst, err)
	}
	after, _ := fs.List(faultDir)
	slices.Sort(before)
	slices.Sort(after)
	if !slices.Equal(before, after) {
		t.Fatalf("a refused open changed the directory: %v -> %v", before, after)
	}
}

// TestOpenRefusesMissingStateFile: an engine that wrote a state file must
// find it again.
func TestOpenRefusesMissingStateFile(t *testing.T) {
	fs := baseImage(t, 50, true)
	if err := fs.Remove(path.Join(faultDir, stateFileName)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(memConfig(fs))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), stateFileName) {
		t.Fatalf("open without its state file: %v", err)
	}
}

// TestOpenRefusesLostData: a directory whose Pebble files are all gone
// but whose state file names a store is not taken for a new store.
func TestOpenRefusesLostData(t *testing.T) {
	fs := baseImage(t, 50, true)
	names, _ := fs.List(faultDir)
	for _, n := range names {
		if n != stateFileName {
			if err := fs.Remove(path.Join(faultDir, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, err := Open(memConfig(fs))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "data files are gone") {
		t.Fatalf("open of a lost store: %v", err)
	}
}

// TestNewestWALHole: a hole in the newest WAL with good records after it
// is corruption within one boot (the page cache has no holes). After a
// reboot (unsynced pages may be lost in any order) it is a torn end for an
// engine no peer can rebuild (lite), and still refused for one that has
// peers (its node rebuilds rather than guess).
func TestNewestWALHole(t *testing.T) {
	base := crashImage(t, 100, 300)
	names, _ := base.List(faultDir)
	var wal string
	for _, n := range names {
		if strings.HasSuffix(n, ".log") && n > wal {
			wal = n
		}
	}
	size := fileSize(t, base, wal)
	if size < 2*logBlockSize {
		t.Fatalf("newest WAL %s has %d bytes; want two blocks", wal, size)
	}
	fs := copyFS(base)
	flip(t, fs, wal, logBlockSize/2, 0xff)

	_, err := Open(memConfig(fs))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), wal) || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("same boot: %v", err)
	}
	cfg := memConfig(fs)
	cfg.BootID = func() string { return "boot-2" }
	if _, err := Open(cfg); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), wal) {
		t.Fatalf("after a reboot, an engine with peers: %v", err)
	}
	cfg.NoPeers = true
	e, err := Open(cfg)
	if err != nil {
		t.Fatalf("after a reboot: %v", err)
	}
	defer e.Close()
	for i := 0; i < 100; i++ { // flushed before the hole: all there
		if _, ok := mustGet(t, e, recKey(i), 1); !ok {
			t.Fatalf("record %d lost", i)
		}
	}
}

// TestFatalRecordsFault: a failed WAL fsync is fatal; the fault is recorded
// with the file and errno, and the next open refuses (a replicated node
// rebuilds) unless told to clear it once the files prove whole.
// walSyncFails fails every fsync of a WAL with EIO while armed.
func walSyncFails(armed *atomic.Bool) errorfs.Injector {
	return errorfs.InjectorFunc(func(op errorfs.Op) error {
		sync := op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData || op.Kind == errorfs.OpFileSyncTo
		if armed.Load() && sync && strings.HasSuffix(op.Path, ".log") {
			return syscall.EIO
		}
		return nil
	})
}

// blockingFatal is a Config.Fatal that hands its error to fatal and, as a
// fatal error never returns, blocks its goroutine for good.
func blockingFatal(fatal chan<- error) func(error) {
	return func(err error) {
		fatal <- err
		select {}
	}
}

func TestFatalRecordsFault(t *testing.T) {
	mem := vfs.NewCrashableMem()
	var armed atomic.Bool
	cfg := memConfig(errorfs.Wrap(mem, walSyncFails(&armed)))
	fatal := make(chan error, 1)
	cfg.Fatal = blockingFatal(fatal)
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := &applier{t: t, e: e}
	a.apply(1, []*cairnpb.Operation{putOp(recKey(0), recValue(0), 0, nil)}, Sync)
	armed.Store(true)
	go func() {
		b := e.NewBatch(testOrigin)
		b.Apply(2, nil)
		_ = b.Commit(Sync)
	}()
	var ferr error
	select {
	case ferr = <-fatal:
	case <-time.After(10 * time.Second):
		t.Fatal("a failed WAL fsync did not stop the engine")
	}
	if !strings.Contains(ferr.Error(), ".log") || !strings.Contains(ferr.Error(), "EIO") {
		t.Fatalf("fatal error does not name the file and errno: %v", ferr)
	}
	// The process is gone (power too: only synced data is left); the next
	// one opens the same files.
	cfg2 := memConfig(mem.CrashClone(vfs.CrashCloneCfg{}))
	_, err = Open(cfg2)
	var fe *FaultError
	if !errors.As(err, &fe) || fe.Fault.Errno != "EIO" || !strings.HasSuffix(fe.Fault.File, ".log") || fe.Fault.Op != "fsync" {
		t.Fatalf("open after the fault: %v (%+v)", err, fe)
	}
	cfg2.NoPeers = true
	e2, err := Open(cfg2)
	if err != nil {
		t.Fatalf("open clearing the fault: %v", err)
	}
	defer e2.Close()
	if _, ok := mustGet(t, e2, recKey(0), 1); !ok {
		t.Fatal("the SYNC write before the fault is gone")
	}
}

// usageFS reports a disk of fixed size whose free space shrinks as files
// grow, like a small real file system.
type usageFS struct {
	*vfs.MemFS
	mu    sync.Mutex
	total int64
}

func (u *usageFS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	used := u.used(faultDir)
	free := max(0, u.total-used)
	return vfs.DiskUsage{AvailBytes: uint64(free), TotalBytes: uint64(u.total), UsedBytes: uint64(used)}, nil
}

func (u *usageFS) used(dir string) int64 {
	names, _ := u.MemFS.List(dir)
	var n int64
	for _, name := range names {
		if fi, err := u.MemFS.Stat(path.Join(dir, name)); err == nil && !fi.IsDir() {
			n += fi.Size()
		}
	}
	return n
}

func (u *usageFS) setTotal(n int64) {
	u.mu.Lock()
	u.total = n
	u.mu.Unlock()
}

// TestAdmissionKeepsTheMargin: back-to-back large puts on a small disk are
// refused before the margin is used, deletes still pass, and no write is
// acknowledged that leaves less than the margin.
func TestAdmissionKeepsTheMargin(t *testing.T) {
	fs := &usageFS{MemFS: vfs.NewMem(), total: 64 << 20}
	cfg := memConfig(fs)
	cfg.MinFreeBytes = 16 << 20
	cfg.MemTableBytes = 64 << 20
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	val := bytes.Repeat([]byte{'x'}, 64<<10)
	var acked int
	for i := 0; i < 2000; i++ {
		op := &cairnpb.Operation{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: pbKey(recKey(i)), Value: val}}}
		if err := e.Admit(2*int64(len(val)), AddsData); err != nil {
			if !errors.Is(err, ErrDiskFull) {
				t.Fatal(err)
			}
			break
		}
		a := &applier{t: t, e: e, next: uint64(i)}
		a.apply(1, []*cairnpb.Operation{op}, Sync)
		acked++
		u, _ := fs.GetDiskUsage(faultDir)
		if int64(u.AvailBytes) < cfg.MinFreeBytes {
			t.Fatalf("after %d acknowledged puts only %d bytes are free, below the %d margin", acked, u.AvailBytes, cfg.MinFreeBytes)
		}
	}
	if acked == 0 || acked >= 2000 {
		t.Fatalf("%d puts acknowledged: want some, then refusals", acked)
	}
	if !e.LowDisk() || e.Health().State != "low-disk" {
		t.Fatalf("health after refusals: %+v", e.Health())
	}
	if err := e.Admit(200, Reclaims); err != nil {
		t.Fatalf("a delete on a full disk: %v", err)
	}
	// Space comes back (the disk grows): puts are admitted again.
	fs.setTotal(1 << 30)
	e.space.poll()
	if err := e.Admit(2*int64(len(val)), AddsData); err != nil {
		t.Fatalf("after space returned: %v", err)
	}
}

// TestAdmissionSeesTheDiskFillUp: another process fills the disk to 2 MiB
// above the margin between two polls; back-to-back puts are refused before
// the margin is used (the engine reads the free space again after each MiB
// it admits), not only at the next poll.
func TestAdmissionSeesTheDiskFillUp(t *testing.T) {
	fs := &usageFS{MemFS: vfs.NewMem(), total: 1 << 30}
	cfg := memConfig(fs)
	cfg.MinFreeBytes = 16 << 20
	cfg.MemTableBytes = 64 << 20
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.space.poll()
	fs.setTotal(fs.used(faultDir) + cfg.MinFreeBytes + 2<<20) // the ballast
	val := bytes.Repeat([]byte{'x'}, 64<<10)
	acked := 0
	for i := 0; i < 1000; i++ {
		if err := e.Admit(2*int64(len(val)), AddsData); errors.Is(err, ErrDiskFull) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		op := &cairnpb.Operation{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: pbKey(recKey(i)), Value: val}}}
		a := &applier{t: t, e: e, next: uint64(i)}
		a.apply(1, []*cairnpb.Operation{op}, Sync)
		acked++
		if u, _ := fs.GetDiskUsage(faultDir); int64(u.AvailBytes) < cfg.MinFreeBytes {
			t.Fatalf("after %d acknowledged puts only %d bytes are free, below the %d margin", acked, u.AvailBytes, cfg.MinFreeBytes)
		}
	}
	if acked >= 1000 {
		t.Fatal("1000 puts of 64 KiB were admitted on a disk with 2 MiB to spare")
	}
	t.Logf("%d puts admitted, then refused", acked)
}

// TestReadOnlyStartBecomesWritable: an engine opened on a disk too full to
// open for writing serves reads only, then becomes writable on its own
// once space is freed.
func TestReadOnlyStartBecomesWritable(t *testing.T) {
	mem := baseImage(t, 150, false) // the WAL holds records: the open must flush them
	fs := &usageFS{MemFS: mem}
	fs.setTotal(fs.used(faultDir) + 1<<20) // 1 MiB free
	cfg := memConfig(fs)
	cfg.MinFreeBytes = 8 << 20
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if h := e.Health(); h.State != "read-only" || !e.ReadOnly() {
		t.Fatalf("health on a full disk: %+v", h)
	}
	checkAll(t, e, 150)
	var df *DiskFullError
	if err := e.Admit(10, Reclaims); !errors.As(err, &df) || !df.ReadOnly {
		t.Fatalf("a write while read-only: %v", err)
	}
	fs.setTotal(1 << 30)
	deadline := time.Now().Add(10 * time.Second)
	for e.ReadOnly() {
		if time.Now().After(deadline) {
			t.Fatal("still read-only 10 s after space was freed")
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, with a deadline
	}
	a := &applier{t: t, e: e, next: 1 << 20}
	a.apply(1, []*cairnpb.Operation{putOp(recKey(999), recValue(999), 0, nil)}, Sync)
	if _, ok := mustGet(t, e, recKey(999), 1); !ok {
		t.Fatal("write after becoming writable is missing")
	}
	checkAll(t, e, 150)
}

var _ = io.EOF

// TestWALIsNotPreallocated: Pebble's request to preallocate each new WAL
// (110% of a memtable) never reaches the disk, so a small disk keeps its
// room and the free-space account sees what the WAL holds; a WAL holds
// about what was written to it, and every SYNC write survives a reopen.
func TestWALIsNotPreallocated(t *testing.T) {
	var asked atomic.Int64
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFilePreallocate && strings.HasSuffix(op.Path, ".log") {
			asked.Add(1)
			return syscall.ENOSPC // would be a fault if it were recorded as one
		}
		return nil
	})
	cfg := memConfig(errorfs.Wrap(vfs.Default, inj))
	cfg.Dir = t.TempDir() // a real file system, where Pebble preallocates
	cfg.MemTableBytes = 64 << 20
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := &applier{t: t, e: e}
	for i := range 100 {
		a.apply(1, []*cairnpb.Operation{putOp(recKey(i), recValue(i), 0, nil)}, Sync)
	}
	var walBytes int64
	for _, w := range e.wals() {
		walBytes += e.size(w.name)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 0 {
		t.Fatalf("%d WAL preallocations reached the file system", asked.Load())
	}
	if walBytes > 1<<20 {
		t.Fatalf("the WALs take %d bytes for 100 records of 500 bytes: preallocated", walBytes)
	}
	e, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, ok := mustGet(t, e, recKey(99), 1); !ok {
		t.Fatal("the last SYNC write is gone")
	}
}

// lowWaterFS is a usageFS that remembers the least free space seen after
// any write.
type lowWaterFS struct {
	*usageFS
	low atomic.Int64
}

func (l *lowWaterFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := l.usageFS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &lowWaterFile{File: f, fs: l}, nil
}

type lowWaterFile struct {
	vfs.File
	fs *lowWaterFS
}

func (f *lowWaterFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if u, uerr := f.fs.GetDiskUsage(faultDir); uerr == nil && int64(u.AvailBytes) < f.fs.low.Load() {
		f.fs.low.Store(int64(u.AvailBytes))
	}
	return n, err
}

// TestCompactionKeepsHalfTheMargin: a compaction whose output would not
// fit fails (Pebble retries it later) instead of taking the disk below
// half the free-space margin, and the engine keeps taking deletes.
func TestCompactionKeepsHalfTheMargin(t *testing.T) {
	fs := &lowWaterFS{usageFS: &usageFS{MemFS: vfs.NewMem(), total: 64 << 20}}
	fs.low.Store(1 << 62)
	cfg := memConfig(fs)
	cfg.MinFreeBytes = 16 << 20
	cfg.MemTableBytes = 4 << 20
	// Only the test's compaction runs, so nothing else moves the disk.
	cfg.tune = func(o *pebble.Options) { o.DisableAutomaticCompactions = true }
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Random (incompressible) values until about 20 MiB are free.
	rng := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 32<<10)
	a := &applier{t: t, e: e}
	for i := 0; ; i++ {
		for j := range val {
			val[j] = byte(rng.Uint32())
		}
		op := &cairnpb.Operation{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: pbKey(recKey(i)), Value: val}}}
		a.apply(1, []*cairnpb.Operation{op}, WriteNoSync)
		if u, _ := fs.GetDiskUsage(faultDir); int64(u.AvailBytes) < 22<<20 {
			break
		}
	}
	if err := e.db.Load().Flush(); err != nil {
		t.Fatal(err)
	}
	fs.low.Store(1 << 62)
	before, _ := fs.GetDiskUsage(faultDir)
	err = e.db.Load().Compact(t.Context(), []byte{0}, []byte{0xff}, true) // all of it: needs its size again
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a compaction of %d MiB with %d MiB free: %v; want ENOSPC", (64<<20-int64(before.AvailBytes))>>20, before.AvailBytes>>20, err)
	}
	if low := fs.low.Load(); low < cfg.MinFreeBytes/2-(1<<20) {
		t.Fatalf("the compaction took the disk down to %d bytes free, below half the %d margin", low, cfg.MinFreeBytes)
	}
	if err := e.Admit(1<<10, Reclaims); err != nil {
		t.Fatalf("a delete after the failed compaction: %v", err)
	}
	t.Logf("free before %d MiB, least free during the compaction %d MiB (margin %d MiB)", before.AvailBytes>>20, fs.low.Load()>>20, cfg.MinFreeBytes>>20)
}

// TestCorruptionFoundIsRecheckedAtOpen: corruption found while running is
// recorded in the state file; the engine refuses writes from then on; the
// next open checks that file again and refuses while it is still bad,
// naming it (docs/guarantees.md S2).
func TestCorruptionFoundIsRecheckedAtOpen(t *testing.T) {
	base := baseImage(t, 600, true)
	names, _ := base.List(faultDir)
	for _, name := range names {
		if !strings.HasSuffix(name, ".sst") {
			continue
		}
		size := fileSize(t, base, name)
		for _, at := range []int64{size / 4, size / 3, size / 2} {
			fs := copyFS(base)
			flip(t, fs, name, at, 0xff)
			e, err := Open(memConfig(fs))
			if err != nil {
				continue // refused at open: another test's case
			}
			found := checkAll(t, e, 600)
			if found == 0 && e.VerifyBlocks(t.Context(), 0, nil) == nil {
				e.Close()
				continue // harmless: no block holds it
			}
			if err := e.Admit(10, Reclaims); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("a write after corruption was found: %v", err)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			_, err = Open(memConfig(fs))
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "still corrupt") {
				t.Fatalf("reopen after corruption was found in %s: %v", name, err)
			}
			return
		}
	}
	t.Fatal("no flipped sstable byte was found by a read or the scrub")
}

// TestInstallWALFaultIsFatal: a snapshot install whose sstables overlap the
// memtable makes Pebble rotate the WAL inside the ingest; when closing the
// old WAL fails, Pebble panics while its mutex is unlocked, which Go turns
// into an unrecoverable "unlock of unlocked mutex" (exit status 2). The
// engine's Fatal must come first, naming the failed file.
func TestInstallWALFaultIsFatal(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 7))
	src := testEngine(t)
	next := shardFill(t, src, 2, rng, 1, 60, 1<<10)

	mem := vfs.NewCrashableMem()
	var armed atomic.Bool
	cfg := memConfig(errorfs.Wrap(mem, walSyncFails(&armed)))
	cfg.MemTableBytes = 64 << 20 // the shard's records stay in the memtable
	fatal := make(chan error, 1)
	cfg.Fatal = blockingFatal(fatal)
	dst, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shardFill(t, dst, 2, rng, 1, 30, 1<<10)
	in := importInto(t, src, dst, 2, rng)
	armed.Store(true)
	go func() { _ = in.Install(installState(next - 1)) }()
	select {
	case ferr := <-fatal:
		if !strings.Contains(ferr.Error(), ".log") || !strings.Contains(ferr.Error(), "EIO") {
			t.Fatalf("fatal error does not name the WAL and errno: %v", ferr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a failed WAL fsync during an install did not stop the engine")
	}
}
