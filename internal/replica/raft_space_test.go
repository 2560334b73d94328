package replica

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/storage"
)

// TestFullDiskReplicaNeverLeads: the preferred leader's disk refuses puts
// (its margin is above the free space, though it can open for writing).
// The leader's preference would hand it leadership every 20 ticks; it
// refuses the transfer, the leader aborts it and leaves that node alone,
// so leadership stays on the nodes with room and writes keep committing
// (docs/guarantees.md S5).
func TestFullDiskReplicaNeverLeads(t *testing.T) {
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	g := &testGroup{t: t, net: &memNet{nodes: map[uint64]*Raft{}, cut: map[uint64]bool{}, votes: map[uint64]int{}},
		dirs: map[uint64]string{}, engines: map[uint64]*storage.Engine{}, tick: 10 * time.Millisecond,
		preferred: 3, minFree: map[uint64]int64{3: free + free/3}} // puts refused, deletes and votes not
	for id := uint64(1); id <= 3; id++ {
		g.dirs[id] = t.TempDir()
		g.start(id)
	}
	t.Cleanup(func() {
		for id := range g.engines {
			g.stop(id)
		}
	})
	if !g.engines[3].LowDisk() || g.engines[3].ReadOnly() {
		t.Fatalf("node 3's engine: %+v; want low-disk, writable", g.engines[3].Health())
	}
	// Idle, node 3 is caught up (empty entries pass its margin), so the
	// leader's preference sends it MsgTimeoutNow at once: it must refuse.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		if l := g.leader(); l.cfg.Node == 3 {
			t.Fatal("node 3, whose disk refuses puts, took leadership while idle")
		}
		time.Sleep(20 * time.Millisecond) // sampling who leads, not waiting for it
	}
	// Under writes, node 3 falls behind (it refuses appends); a transfer
	// to it would pend and drop proposals until aborted.
	var writes, dropped int
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); writes++ {
		l := g.leader()
		if l.cfg.Node == 3 {
			t.Fatalf("node 3, whose disk refuses puts, leads after %d writes", writes)
		}
		_, err := g.write(l, fmt.Sprintf("/k/%d", writes), "v")
		var nl *NotLeaderError
		switch {
		case errors.Is(err, ErrDropped):
			dropped++
		case err != nil && !errors.As(err, &nl):
			t.Fatalf("write %d: %v", writes, err)
		}
	}
	if dropped > writes/20 {
		t.Fatalf("%d of %d writes dropped: pending transfers to node 3 keep blocking proposals", dropped, writes)
	}
	t.Logf("%d writes, %d dropped", writes, dropped)
}
