package node

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
)

// TestWipedNodeRejoins: a node whose data directory was deleted comes back,
// is readmitted to each of its shards, catches up through snapshots, and
// then serves every record.
func TestWipedNodeRejoins(t *testing.T) {
	sns, _, cfgs := startClusterCfg(t, 3, 2, 3)
	ctx := context.Background()
	const n = 300
	addr := sns[0].Addr()
	for i := 0; i < n; i++ {
		key := &cairnpb.Key{Major: []string{"w", strconv.Itoa(i)}}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := dial(t, addr).Put(ctx, &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: key, Value: []byte("v")}})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("put %d: %v", i, err)
			}
			if hint := leaderHint(err); hint != "" {
				addr = hint
			} else {
				<-time.After(20 * time.Millisecond) // election under way
			}
		}
	}
	victim := 2
	if err := sns[victim].Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(cfgs[victim].Root, "data")); err != nil {
		t.Fatal(err)
	}
	sn, err := StartSN(ctx, cfgs[victim])
	if err != nil {
		t.Fatalf("restart the wiped node: %v", err)
	}
	t.Cleanup(func() { _ = sn.Close() })
	kv := dial(t, sn.Addr())
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < n; i++ {
		key := &cairnpb.Key{Major: []string{"w", strconv.Itoa(i)}}
		for {
			got, err := kv.Get(ctx, &cairnpb.GetRequest{Key: key})
			if err == nil && got.GetFound() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("record %d not served by the rejoined node: %v %v", i, got, err)
			}
			<-time.After(20 * time.Millisecond) // catching up: poll with a deadline
		}
	}
}
