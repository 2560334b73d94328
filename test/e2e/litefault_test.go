package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
)

// TestLiteFailedFsync: a failed fsync of the WAL stops cairn lite at once
// (exit 70, the file and the errno named, never a retry). Lite has no peer
// to rebuild from, so the next start opens the same files once they prove
// whole, with a warning naming the fault, and every write acknowledged with
// SYNC before the failure is there (docs/guarantees.md S4).
func TestLiteFailedFsync(t *testing.T) {
	root := t.TempDir()
	o := liteOpts{}.withDefaults()
	port := freePort(t)
	p := startProcEnv(t, "lite-faulty", []string{"CAIRN_FAULTS=op=sync,path=*.log,after=40"}, liteArgs(root, port, o)...)
	var addr string
	select {
	case m := <-p.stdout.ready:
		addr = m[3]
	case <-p.exited:
		t.Fatalf("lite exited before it was ready: %s", p.stderr.String())
	case <-time.After(readyTimeout):
		t.Fatal("lite: no ready line")
	}
	if !p.logged("CAIRN_FAULTS is set") {
		t.Fatalf("lite does not say it injects faults:\n%s", p.stderr.String())
	}
	kv := dial(t, addr)
	var mu sync.Mutex
	var acked []*cairnpb.Key
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				k := key([]string{fmt.Sprintf("w%d", w), fmt.Sprintf("k%05d", i)}, "v")
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				err := put(ctx, kv, k, []byte(k.String()), cairnpb.SyncPolicy_SYNC_POLICY_SYNC)
				cancel()
				if err != nil {
					return // the process died
				}
				mu.Lock()
				acked = append(acked, k)
				mu.Unlock()
			}
		}()
	}
	code, ok := p.waitExit(30 * time.Second)
	wg.Wait()
	if !ok {
		t.Fatal("lite still runs 30 s after its WAL fsync started failing")
	}
	stderr := p.stderr.String()
	if code != 70 || !strings.Contains(stderr, ".log") || !strings.Contains(stderr, "EIO") {
		t.Fatalf("exit %d, want 70 with the WAL file and EIO named; stderr:\n%s", code, stderr)
	}
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before the fault")
	}

	l := startLite(t, root) // no faults now
	if !l.logged("the last run stopped on a storage fault") {
		t.Fatalf("the restart does not warn about the fault:\n%s", l.stderr.String())
	}
	kv = dial(t, l.addr)
	for _, k := range acked {
		if rec, found := get(t, kv, k); !found || string(rec.GetValue()) != k.String() {
			t.Fatalf("acknowledged SYNC write %v is lost after the fault (%d acknowledged)", k, len(acked))
		}
	}
	t.Logf("summary: acked=%d faults=1 lost=0 (exit %d; %s)", len(acked), code, firstLine(stderr, "fatal"))
}

// firstLine returns the first line of s that contains sub, or "".
func firstLine(s, sub string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}
