package replica

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage"
)

// TestRaftCorruptEngineStopsReplicaForHeal: a follower's engine finds
// corruption (a read of a damaged sstable block) just as the leader sends
// it a snapshot. The install is refused, since the engine refuses writes
// from then on, and the replica stops without a fatal error: its node's
// corruption handler rebuilds it (docs/design/20261125_storage_faults.md).
// A fatal error here would end the whole node instead, as it once did in
// TestCorruptReplicaHeals when the restart's snapshot raced the first read.
func TestRaftCorruptEngineStopsReplicaForHeal(t *testing.T) {
	g := newGroup(t, 5)
	l := g.leader()
	victim := follower(l)
	value := func(i int) string { // no repeats, so the sstable holds it as written
		var b strings.Builder
		for j := range 4 {
			fmt.Fprintf(&b, "%x", sha256.Sum256([]byte(fmt.Sprint(i, "-", j))))
		}
		return b.String()
	}
	var last []byte
	for i := range 40 {
		v, err := g.write(l, fmt.Sprintf("/h%03d/-/v", i), value(i))
		if err != nil {
			t.Fatal(err)
		}
		last = v
	}
	_, idx, _ := storage.ParseVersion(last)
	waitApplied(t, g.net.get(victim), idx)
	g.stop(victim) // a clean close flushes: the records are in an sstable
	damaged := damageValue(t, g.dirs[victim], value)
	for i := range 40 { // the leader truncates its log past the victim
		if _, err := g.write(l, fmt.Sprintf("/later%03d/-/v", i), "v"); err != nil {
			t.Fatal(err)
		}
	}

	found := make(chan error, 1)
	g.onCorrupt = map[uint64]func(error){victim: func(err error) { found <- err }}
	g.net.mu.Lock()
	g.net.snapRead = func(to *Raft) { // the snapshot is in; the first read finds the damage
		k, _ := keys.Parse(fmt.Sprintf("/h%03d/-/v", damaged))
		if _, _, err := to.Engine().GetIn(1, k, time.Now().UnixMilli()); !errors.Is(err, storage.ErrCorrupt) {
			t.Errorf("read of the damaged record: %v, want ErrCorrupt", err)
		}
	}
	g.net.mu.Unlock()
	g.start(victim) // the group's Fatal fails the test; nothing else may stop the replica
	select {
	case err := <-found:
		t.Logf("corruption handler: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the corruption handler did not run")
	}
	r := g.net.get(victim)
	select {
	case <-r.stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the replica did not stop after its snapshot was refused")
	}
	if !r.failed.Load() {
		t.Fatal("the replica stopped but does not report that it failed")
	}
}

// damageValue flips 16 bytes inside one record's value in the closed
// engine's sstables and returns that record's number.
func damageValue(t *testing.T, dir string, value func(int) string) int {
	t.Helper()
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	for _, path := range tables {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := 39; i >= 0; i-- {
			at := bytes.LastIndex(b, []byte(value(i)))
			if at < 0 {
				continue
			}
			for j := at + 8; j < at+24; j++ {
				b[j] ^= 0xff
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return i
		}
	}
	t.Fatalf("no record's value found in the sstables of %s", dir)
	return 0
}
