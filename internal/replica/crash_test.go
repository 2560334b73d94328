package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// boundary is a place where the write path persists: an operation on a
// kind of file.
type boundary struct {
	name  string
	ops   []errorfs.OpKind
	match func(path string) bool
	max   int // the crash comes at a random occurrence in [1, max]
	// dies: a failure here makes Pebble panic past a mutex it already
	// released, a Go runtime fatal error that no recover catches, so the
	// failing variant runs in a child process (TestCrashChild).
	dies bool
}

func suffix(s string) func(string) bool {
	return func(p string) bool { return strings.HasSuffix(p, s) }
}
func prefix(s string) func(string) bool {
	return func(p string) bool { return strings.HasPrefix(p[strings.LastIndexByte(p, '/')+1:], s) }
}

var (
	writes = []errorfs.OpKind{errorfs.OpFileWrite, errorfs.OpFileWriteAt}
	syncs  = []errorfs.OpKind{errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo}
)

// boundaries are every durability boundary of the write path: the WAL
// (group commit), the flush to an sstable, the MANIFEST edit and the
// marker that names the MANIFEST, directory syncs, and Cairn's state file
// (checkpoints).
var boundaries = []boundary{
	{"WAL write", writes, suffix(".log"), 200, false},
	{"WAL fsync", syncs, suffix(".log"), 100, false},
	{"WAL create", []errorfs.OpKind{errorfs.OpCreate, errorfs.OpReuseForWrite}, suffix(".log"), 4, true},
	{"sstable write", writes, suffix(".sst"), 20, false},
	{"sstable fsync", syncs, suffix(".sst"), 6, false},
	{"MANIFEST write", writes, prefix("MANIFEST-"), 6, false},
	{"MANIFEST fsync", syncs, prefix("MANIFEST-"), 6, false},
	{"directory fsync", syncs, func(p string) bool { return strings.HasSuffix(p, "/db") || p == "db" }, 8, false},
	{"marker rename", []errorfs.OpKind{errorfs.OpRename, errorfs.OpCreate}, prefix("marker."), 3, false},
	{"state file write", writes, prefix("cairn-state.json"), 4, false},
	{"state file fsync", syncs, prefix("cairn-state.json"), 4, false},
	{"state file rename", []errorfs.OpKind{errorfs.OpRename}, prefix("cairn-state.json"), 4, false},
}

// crashPoint takes a crash clone of mem (power loss at this instant) at
// the k-th operation of a boundary, and, with fail, makes that operation
// fail with EIO as a dying disk would.
type crashPoint struct {
	b     boundary
	k     int64
	fail  bool
	rng   *rand.Rand
	mem   *vfs.MemFS
	acks  *ackLog
	seen  atomic.Int64
	mu    sync.Mutex
	clone *vfs.MemFS
	acked int // acknowledged writes at the crash
}

func (c *crashPoint) MaybeError(op errorfs.Op) error {
	if !c.hit(op) || c.seen.Add(1) != c.k {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acked = c.acks.len()
	c.clone = c.mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: c.rng.IntN(101), RNG: c.rng})
	if c.fail {
		return fmt.Errorf("injected at %s: %w", c.b.name, syscall.EIO)
	}
	return nil
}

func (c *crashPoint) String() string { return c.b.name }

func (c *crashPoint) hit(op errorfs.Op) bool {
	for _, k := range c.b.ops {
		if op.Kind == k && c.b.match(op.Path) {
			return true
		}
	}
	return false
}

func (c *crashPoint) crashed() (*vfs.MemFS, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clone, c.acked
}

// ackLog is the keys of acknowledged writes, in acknowledgement order.
type ackLog struct {
	mu   sync.Mutex
	keys []string
}

func (a *ackLog) add(k string) {
	a.mu.Lock()
	a.keys = append(a.keys, k)
	a.mu.Unlock()
}

func (a *ackLog) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.keys)
}

// first returns a copy of the first n keys. Writers of a crashed store
// may still be running (nobody stops a dead process's clients), so the
// keys are read under the lock.
func (a *ackLog) first(n int) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.keys[:n]...)
}

// TestCrashAtEveryDurabilityBoundary: under eight concurrent SYNC writers,
// power is lost at a random occurrence of each durability boundary (a
// crash clone of the MemFS keeps what was synced and a random part of what
// was not), with and without that operation failing; the store reopens on
// the clone, after a reboot, and every write acknowledged before the
// crash is there with its value.
func TestCrashAtEveryDurabilityBoundary(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun: go test ./internal/replica/ -run '^%s$' -count=1 -seed=%d)", seed, t.Name(), seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, b := range boundaries {
		for _, fail := range []bool{false, true} {
			name := b.name
			if fail {
				name += " fails"
			}
			t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
				if fail && b.dies {
					crashInChild(t, b.name, 1+rng.Int64N(int64(b.max)))
					return
				}
				c := &crashPoint{b: b, k: 1 + rng.Int64N(int64(b.max)), fail: fail,
					rng: rand.New(rand.NewPCG(rng.Uint64(), 1)), mem: vfs.NewCrashableMem(), acks: &ackLog{}}
				runUntilCrash(t, c)
				clone, acked := c.crashed()
				if clone == nil {
					t.Fatalf("%s occurrence %d was never reached (%d seen)", b.name, c.k, c.seen.Load())
				}
				t.Logf("crash at %s #%d (fail: %v): %d writes acknowledged", b.name, c.k, fail, acked)
				checkAcked(t, clone, c.acks.first(acked))
			})
		}
	}
}

// crashConfig is the engine config of the crash tests on fs.
func crashConfig(fs vfs.FS, boot string) storage.Config {
	sc := storage.DefaultConfig("db")
	sc.FS = fs
	sc.CacheBytes, sc.MemTableBytes, sc.MinFreeBytes = 1<<20, 1<<20, 0
	sc.CheckpointInterval = 20 * time.Millisecond
	sc.BootID = func() string { return boot }
	sc.NoPeers = true // lite's policy: a fault leaves only unsynced writes missing
	sc.Logger = slog.New(slog.DiscardHandler)
	return sc
}

// runUntilCrash runs SYNC writers over c's file system until the crash
// point was passed and a little more, or the engine stopped.
func runUntilCrash(t *testing.T, c *crashPoint) {
	t.Helper()
	sc := crashConfig(errorfs.Wrap(c.mem, c), "boot-1")
	stopped := make(chan struct{})
	var once sync.Once
	sc.Fatal = func(error) { // the process dies: nothing more is acknowledged
		once.Do(func() { close(stopped) })
		select {} // whichever goroutine this is, it never runs again
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- writeUntil(ctx, cancel, c, sc) }()
	select {
	case <-stopped:
		// The process is dead: its writers wait forever for answers that
		// will not come, as a dead process's clients would. Leave them.
	case err := <-done:
		if clone, _ := c.crashed(); err != nil && clone == nil {
			t.Fatal(err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the workload neither crashed nor ended in 90 s")
	}
}

// writeUntil opens the store and runs eight SYNC writers until ctx ends,
// which they do 200 acknowledgements after the crash point.
func writeUntil(ctx context.Context, cancel func(), c *crashPoint, sc storage.Config) error {
	e, err := storage.Open(sc)
	if err != nil {
		return err
	}
	defer e.Close()
	meta, err := e.Init("crash", 4)
	if err != nil {
		return err
	}
	cfg := DefaultConfig()
	cfg.Logger, cfg.Fatal = sc.Logger, sc.Fatal
	l, err := OpenLocal(e, meta, cfg)
	if err != nil {
		return err
	}
	defer l.Close()
	var wg sync.WaitGroup
	var after atomic.Int64
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				k := fmt.Sprintf("/w%d/k%06d/-/v", w, i)
				res, err := l.Propose(ctx, put(k, crashValue(k), 0), storage.Sync)
				if err != nil || res.Err != nil {
					return
				}
				c.acks.add(k)
				if clone, _ := c.crashed(); clone != nil && after.Add(1) > 200 {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	return nil
}

func crashValue(k string) string { return strings.Repeat(k, 30) }

// checkAcked reopens the store on the crash clone, as after a reboot, and
// reads back every acknowledged write.
func checkAcked(t *testing.T, clone *vfs.MemFS, acked []string) {
	t.Helper()
	e, err := storage.Open(crashConfig(clone, "boot-2"))
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	defer e.Close()
	for _, k := range acked {
		key, _ := keys.Parse(k)
		rec, ok, err := e.Get(key, time.Now().UnixMilli())
		switch {
		case err != nil:
			t.Fatalf("%s: %v", k, err)
		case !ok:
			t.Fatalf("acknowledged SYNC write %s is lost (%d acknowledged before the crash)", k, len(acked))
		case string(rec.Value) != crashValue(k):
			t.Fatalf("%s has another value", k)
		}
	}
	if errors.Is(err, storage.ErrCorrupt) {
		t.Fatal(err)
	}
}

// crashInChild runs TestCrashChild in a child process on a real directory:
// it fails the k-th operation of the named boundary with EIO and dies of
// it, printing each acknowledged key as it goes. The store then reopens
// (the same boot: the OS kept its page cache) with every acknowledged
// write, and refuses until the fault it recorded is cleared.
func crashInChild(t *testing.T, name string, k int64) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CAIRN_CRASH_CHILD="+dir, "CAIRN_CRASH_BOUNDARY="+name, fmt.Sprintf("CAIRN_CRASH_K=%d", k))
	out, err := cmd.Output()
	if err == nil {
		t.Fatalf("the child survived a failed %s:\n%s", name, out)
	}
	var acked []string
	for _, line := range strings.Split(string(out), "\n") {
		if k, ok := strings.CutPrefix(line, "acked "); ok {
			acked = append(acked, k)
		}
	}
	sc := crashConfig(vfs.Default, "boot-1")
	sc.Dir = filepath.Join(dir, "db")
	sc.NoPeers = false
	var fe *storage.FaultError
	if !strings.Contains(string(out), "opened\n") {
		// The failure came while the child opened the store: Open returned
		// it (nothing was written to lose), and the store opens cleanly.
		e, err := storage.Open(sc)
		if err != nil {
			t.Fatalf("reopen after the child's open failed at %s: %v", name, err)
		}
		e.Close()
		t.Logf("the child's open failed at %s #%d; the store reopens cleanly", name, k)
		return
	}
	if _, err := storage.Open(sc); !errors.As(err, &fe) || fe.Fault.Errno != "EIO" {
		t.Fatalf("reopen after the child died of a failed %s: %v; want the fault recorded", name, err)
	}
	sc.NoPeers = true
	e, err := storage.Open(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, k := range acked {
		key, _ := keys.Parse(k)
		if _, ok, err := e.Get(key, time.Now().UnixMilli()); err != nil || !ok {
			t.Fatalf("acknowledged %s lost after the child died (%v)", k, err)
		}
	}
	t.Logf("child died at %s #%d (fault: %s); %d acknowledged writes survived", name, k, fe.Fault.String(), len(acked))
}

// TestCrashChild is the child of crashInChild; it does nothing on its own.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("CAIRN_CRASH_CHILD")
	if dir == "" {
		t.Skip("the child process of TestCrashAtEveryDurabilityBoundary")
	}
	var b boundary
	for _, c := range boundaries {
		if c.name == os.Getenv("CAIRN_CRASH_BOUNDARY") {
			b = c
		}
	}
	k, _ := strconv.ParseInt(os.Getenv("CAIRN_CRASH_K"), 10, 64)
	var seen atomic.Int64
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		for _, kind := range b.ops {
			if op.Kind == kind && b.match(op.Path) && seen.Add(1) == k {
				return fmt.Errorf("injected at %s: %w", b.name, syscall.EIO)
			}
		}
		return nil
	})
	sc := crashConfig(errorfs.Wrap(vfs.Default, inj), "boot-1")
	sc.Dir = filepath.Join(dir, "db")
	sc.Fatal = func(err error) { fmt.Println("fatal", err); os.Exit(70) }
	e, err := storage.Open(sc)
	if err != nil {
		t.Fatal(err) // a failure while opening is the open's error, not a fault
	}
	fmt.Println("opened")
	meta, err := e.Init("crash", 4)
	if err != nil {
		t.Fatal(err)
	}
	l, err := OpenLocal(e, meta, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				key := fmt.Sprintf("/w%d/k%06d/-/v", w, i)
				if res, err := l.Propose(context.Background(), put(key, crashValue(key), 0), storage.Sync); err != nil || res.Err != nil {
					return
				}
				mu.Lock()
				fmt.Println("acked", key)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Fatal("the writers stopped without the process dying")
}
