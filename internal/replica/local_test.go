package replica

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

func openTest(t *testing.T, cfg Config) *Local {
	t.Helper()
	sc := storage.DefaultConfig(t.TempDir())
	sc.CacheBytes, sc.MinFreeBytes = 8<<20, 0
	e, err := storage.Open(sc)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := e.Init("test", 4)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Fatal = func(err error) { t.Errorf("fatal: %v", err) }
	l, err := OpenLocal(e, meta, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); _ = e.Close() })
	return l
}

func put(key, value string, ttl time.Duration) *commandpb.Command {
	k, _ := keys.Parse(key)
	return &commandpb.Command{Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{Ops: []*cairnpb.Operation{
		{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{
			Key: &cairnpb.Key{Major: k.Major, Minor: k.Minor}, Value: []byte(value), TtlMs: ttl.Milliseconds(),
		}}},
	}}}}
}

// TestConcurrentProposalsAllApplied runs many writers at once, so commits
// group; every acknowledged write gets a distinct index and is readable.
func TestConcurrentProposalsAllApplied(t *testing.T) {
	l := openTest(t, DefaultConfig())
	const writers, each = 16, 50
	var wg sync.WaitGroup
	versions := make(chan []byte, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r, err := l.Propose(context.Background(), put("/w/-/"+string(rune('a'+w))+"/"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v", 0), storage.Sync)
				if err != nil || r.Err != nil {
					t.Errorf("propose: %v %v", err, r.Err)
					return
				}
				versions <- r.Ops[0].NewVersion
			}
		}()
	}
	wg.Wait()
	close(versions)
	seen := map[string]bool{}
	for v := range versions {
		if seen[string(v)] {
			t.Fatalf("version %x given twice", v)
		}
		seen[string(v)] = true
	}
	if got := l.AppliedIndex(); got != writers*each {
		t.Fatalf("applied index %d, want %d", got, writers*each)
	}
}

func TestVersionConsistency(t *testing.T) {
	l := openTest(t, DefaultConfig())
	r, err := l.Propose(context.Background(), put("/v", "1", 0), storage.NoSync)
	if err != nil {
		t.Fatal(err)
	}
	v := r.Ops[0].NewVersion
	if err := l.ReadReady(context.Background(), Consistency{Kind: AtVersion, Version: v}); err != nil {
		t.Fatalf("a version already applied: %v", err)
	}
	origin, index, _ := storage.ParseVersion(v)
	future := storage.MakeVersion(origin, index+1)
	done := make(chan error, 1)
	go func() {
		done <- l.ReadReady(context.Background(), Consistency{Kind: AtVersion, Version: future, Timeout: 10 * time.Second})
	}()
	if _, err := l.Propose(context.Background(), put("/v", "2", 0), storage.NoSync); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiting for the next write's version: %v", err)
	}
	far := storage.MakeVersion(origin, index+100)
	if err := l.ReadReady(context.Background(), Consistency{Kind: AtVersion, Version: far, Timeout: 20 * time.Millisecond}); !errors.Is(err, ErrConsistency) {
		t.Fatalf("unreachable version: %v, want ErrConsistency", err)
	}
	foreign := storage.MakeVersion(origin+1, 1)
	if err := l.ReadReady(context.Background(), Consistency{Kind: AtVersion, Version: foreign}); !errors.Is(err, ErrForeignVersion) {
		t.Fatalf("foreign version: %v, want ErrForeignVersion", err)
	}
}

func TestProposeAfterCloseAndCanceled(t *testing.T) {
	l := openTest(t, DefaultConfig())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Propose(ctx, put("/c", "1", 0), storage.NoSync); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled propose: %v", err)
	}
	if _, ok, _ := l.Engine().Get(keys.New([]string{"c"}), time.Now().UnixMilli()); ok {
		t.Fatal("a proposal canceled before it was taken was applied")
	}
	l.Close()
	if _, err := l.Propose(context.Background(), put("/c", "1", 0), storage.NoSync); !errors.Is(err, ErrClosed) {
		t.Fatalf("propose after close: %v", err)
	}
}

func TestSweeperReclaimsExpired(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SweepInterval = 10 * time.Millisecond
	l := openTest(t, cfg)
	for _, k := range []string{"/t/-/a", "/t/-/b"} {
		if _, err := l.Propose(context.Background(), put(k, "v", time.Millisecond), storage.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		applied := l.waitChan() // taken before the check, so no sweep is missed
		left, err := l.Engine().ExpiredBefore(time.Now().UnixMilli()+1000, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expired records not reclaimed: %d index entries left", len(left))
		}
		select {
		case <-applied:
		case <-time.After(time.Until(deadline)):
		}
	}
}
