package node

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// lockedBuffer collects log output from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// engineWithTables writes records into an engine at dir and closes it, so
// they are in sstables.
func engineWithTables(t *testing.T, dir string) {
	t.Helper()
	e := openScrubEngine(t, dir, nil)
	meta, err := e.Init("s", 4)
	if err != nil {
		t.Fatal(err)
	}
	b := e.NewBatch(meta.Origin)
	for i := range 500 {
		cmd := &commandpb.Command{NowMs: 1, Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{Ops: []*cairnpb.Operation{
			{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: &cairnpb.Key{Major: []string{fmt.Sprint("k", i)}}, Value: bytes.Repeat([]byte{'v'}, 200)}}},
		}}}}
		b.Apply(uint64(i+1), cmd)
	}
	if err := b.Commit(storage.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

func openScrubEngine(t *testing.T, dir string, onCorrupt func(error)) *storage.Engine {
	t.Helper()
	sc := storage.DefaultConfig(dir)
	sc.CacheBytes, sc.MinFreeBytes, sc.OnCorruption = 8<<20, 0, onCorrupt
	e, err := storage.Open(sc)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func waitLog(t *testing.T, buf *lockedBuffer, line string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), line) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q logged within 10s:\n%s", line, buf.String())
		}
		<-time.After(10 * time.Millisecond) // polling a condition with a deadline
	}
}

// TestBackgroundScrub: a pass over whole files logs its start and end with
// files, bytes and duration; a flipped byte in an sstable is found by the
// next pass and runs the engine's corruption handling.
func TestBackgroundScrub(t *testing.T) {
	dir := t.TempDir()
	engineWithTables(t, dir)
	var buf lockedBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	e := openScrubEngine(t, dir, nil)
	s := startScrub(e, ScrubConfig{Rate: 64 << 20, Interval: time.Hour}, log)
	waitLog(t, &buf, "scrub pass done")
	s.stop()
	if !strings.Contains(buf.String(), "scrub pass starting") || !strings.Contains(buf.String(), "files=1") {
		t.Fatalf("want a start line and an end line naming one file:\n%s", buf.String())
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) != 1 {
		t.Fatalf("sstables %v, want one", tables)
	}
	data, err := os.ReadFile(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/4] ^= 0xFF
	if err := os.WriteFile(tables[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	found := make(chan error, 1)
	e = openScrubEngine(t, dir, func(err error) { found <- err })
	defer e.Close()
	s = startScrub(e, ScrubConfig{Rate: 64 << 20, Interval: time.Hour}, log)
	defer s.stop()
	select {
	case err := <-found:
		if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(tables[0])) {
			t.Fatalf("corruption handler got %v, want ErrCorrupt naming %s", err, filepath.Base(tables[0]))
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the scrub did not find the flipped byte within 10s:\n%s", buf.String())
	}
	waitLog(t, &buf, "scrub pass found damage")
}
