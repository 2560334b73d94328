package node

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func dialControl(t *testing.T, addr string) controlpb.ControlClient {
	t.Helper()
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return controlpb.NewControlClient(c)
}

// putKeys writes n records through whichever node leads their shard.
func putKeys(t *testing.T, sns []*SN, n int) {
	t.Helper()
	addr := sns[0].Addr()
	for i := range n {
		key := &cairnpb.Key{Major: []string{"b", strconv.Itoa(i)}}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := dial(t, addr).Put(context.Background(), &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: key, Value: bytes.Repeat([]byte("v"), 100)}})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("put %d: %v", i, err)
			}
			if hint := leaderHint(err); hint != "" {
				addr = hint
			} else {
				<-time.After(20 * time.Millisecond) // election under way: poll with a deadline
			}
		}
	}
}

// shardLeader waits for a node to lead shard and returns its index in sns.
func shardLeader(t *testing.T, sns []*SN, shard uint64) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for i, sn := range sns {
			if r := sn.replica(shard); r != nil && r.IsLeader() {
				return i
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leader of shard %d after 10s", shard)
		}
		<-time.After(20 * time.Millisecond) // poll with a deadline
	}
}

// snapshotFiles reads the snapshot's files of shard on sn: topology.json,
// shard-S.json, shard-S.data ("" for a missing file).
func snapshotFiles(t *testing.T, sn *SN, name string, shard uint64) (topo, meta, data string) {
	t.Helper()
	dir := filepath.Join(sn.cfg.Root, snapshotsDir, name)
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(b)
	}
	base := shardFileBase(dir, shard)
	return read(filepath.Join(dir, topology.FileName)), read(base + ".json"), read(base + ".data")
}

// noTempFiles fails if a temporary file was left in sn's snapshot dir.
func noTempFiles(t *testing.T, sn *SN, name string) {
	t.Helper()
	tmps, _ := filepath.Glob(filepath.Join(sn.cfg.Root, snapshotsDir, name, "*.tmp"))
	if len(tmps) > 0 {
		t.Errorf("temporary files left behind: %v", tmps)
	}
}

// TestCopySnapshotToReplicas: a shard's snapshot written on its leader is
// copied, byte for byte and with its checksum, to the other replicas'
// nodes, again idempotently; copies that cannot be right are refused and
// leave a previous good copy as it was.
func TestCopySnapshotToReplicas(t *testing.T) {
	sns, _ := startCluster(t, 3, 1, 3)
	putKeys(t, sns, 200)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	li := shardLeader(t, sns, 1)
	leader := sns[li]
	snap, err := dialControl(t, leader.Addr()).SnapshotShard(ctx, &controlpb.SnapshotShardRequest{Store: "kvstore", Name: "s1", Shard: 1})
	if err != nil {
		t.Fatalf("SnapshotShard on the leader: %v", err)
	}
	wantTopo, wantMeta, wantData := snapshotFiles(t, leader, "s1", 1)
	meta, err := readShardBackup(files.Default, filepath.Join(leader.cfg.Root, snapshotsDir, "s1"), 1)
	if err != nil || meta.CRC32C != snap.GetCrc32C() || len(meta.CRC32C) != 8 {
		t.Fatalf("leader's shard-1.json %s (%v): want crc32c %q", wantMeta, err, snap.GetCrc32C())
	}
	if uint64(len(wantData)) != snap.GetBytes() || snap.GetBytes() < snapshotChunkBytes/100 {
		t.Fatalf("leader's data is %d bytes, reply says %d", len(wantData), snap.GetBytes())
	}
	var others []*SN
	for i, sn := range sns {
		if i != li {
			others = append(others, sn)
		}
	}
	copyTo := func(sn *SN, req *controlpb.CopySnapshotRequest) (*controlpb.CopySnapshotReply, error) {
		return dialControl(t, sn.Addr()).CopySnapshot(ctx, req)
	}
	good := &controlpb.CopySnapshotRequest{Store: "kvstore", Name: "s1", Shard: 1, From: leader.Addr()}
	for _, sn := range others {
		for try := range 2 { // the second copy replaces the first with the same files
			r, err := copyTo(sn, good)
			if err != nil {
				t.Fatalf("copy %d to node %d: %v", try, sn.ID(), err)
			}
			if r.GetBytes() != snap.GetBytes() || r.GetCrc32C() != snap.GetCrc32C() {
				t.Errorf("copy to node %d: %d bytes crc32c %s, want %d %s", sn.ID(), r.GetBytes(), r.GetCrc32C(), snap.GetBytes(), snap.GetCrc32C())
			}
		}
		topo, meta, data := snapshotFiles(t, sn, "s1", 1)
		if topo != wantTopo || meta != wantMeta || data != wantData {
			t.Errorf("node %d's copy differs from the leader's files (topology %v, json %v, data %v)", sn.ID(), topo == wantTopo, meta == wantMeta, data == wantData)
		}
		noTempFiles(t, sn, "s1")
	}

	target := others[0]
	for _, tc := range []struct {
		name string
		req  *controlpb.CopySnapshotRequest
		code codes.Code
		want string
	}{
		{"another store", &controlpb.CopySnapshotRequest{Store: "other", Name: "s1", Shard: 1, From: leader.Addr()},
			codes.FailedPrecondition, `no topology of store "other"`},
		{"a shard not hosted here", &controlpb.CopySnapshotRequest{Store: "kvstore", Name: "s1", Shard: 7, From: leader.Addr()},
			codes.FailedPrecondition, "hosts no replica of shard 7"},
		{"a bad name", &controlpb.CopySnapshotRequest{Store: "kvstore", Name: "../x", Shard: 1, From: leader.Addr()},
			codes.InvalidArgument, "not valid"},
		{"a snapshot the holder lacks", &controlpb.CopySnapshotRequest{Store: "kvstore", Name: "nope", Shard: 1, From: leader.Addr()},
			codes.NotFound, "has no snapshot nope of shard 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := copyTo(target, tc.req)
			if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Fatalf("got %v, want %v with %q", err, tc.code, tc.want)
			}
			if _, meta, _ := snapshotFiles(t, target, tc.req.GetName(), 1); tc.req.GetName() != "s1" && meta != "" {
				t.Errorf("a refused copy left shard-1.json: %s", meta)
			}
		})
	}

	t.Run("data corrupted at the holder", func(t *testing.T) {
		path := shardFileBase(filepath.Join(leader.cfg.Root, snapshotsDir, "s1"), 1) + ".data"
		bad := []byte(wantData)
		bad[len(bad)/2] ^= 0xff
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := copyTo(target, good)
		msg := status.Convert(err).Message()
		if status.Code(err) != codes.DataLoss || !strings.Contains(msg, "crc32c") || !strings.Contains(msg, "expected "+snap.GetCrc32C()) {
			t.Fatalf("got %v, want DataLoss naming the crc32c mismatch", err)
		}
		if _, meta, data := snapshotFiles(t, target, "s1", 1); meta != wantMeta || data != wantData {
			t.Errorf("the refused copy changed the previous good copy")
		}
		noTempFiles(t, target, "s1")
	})

	t.Run("shard-1.json corrupted at the holder", func(t *testing.T) {
		path := shardFileBase(filepath.Join(leader.cfg.Root, snapshotsDir, "s1"), 1) + ".json"
		bad := []byte(strings.Replace(wantMeta, `"index": `, `"index": 1`, 1))
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := copyTo(target, good)
		if msg := status.Convert(err).Message(); status.Code(err) != codes.DataLoss || !strings.Contains(msg, path+" is corrupt: crc32c") {
			t.Fatalf("got %v, want DataLoss naming the holder's corrupt %s", err, path)
		}
		if _, meta, data := snapshotFiles(t, target, "s1", 1); meta != wantMeta || data != wantData {
			t.Errorf("the refused copy changed the previous good copy")
		}
	})
}

// fakeHolder is a Control server whose FetchSnapshot sends msgs.
type fakeHolder struct {
	controlpb.UnimplementedControlServer
	msgs []*controlpb.SnapshotChunk
}

func (f *fakeHolder) FetchSnapshot(_ *controlpb.FetchSnapshotRequest, s controlpb.Control_FetchSnapshotServer) error {
	for _, m := range f.msgs {
		if err := s.Send(m); err != nil {
			return err
		}
	}
	return nil
}

func startFakeHolder(t *testing.T, msgs []*controlpb.SnapshotChunk) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	controlpb.RegisterControlServer(srv, &fakeHolder{msgs: msgs})
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// TestCopySnapshotRefusesWrongHeader: the receiving node refuses a stream
// whose header names another snapshot, store, shard or topology, lacks a
// checksum, or whose data does not match it; nothing is left in place.
func TestCopySnapshotRefusesWrongHeader(t *testing.T) {
	sns, topo := startCluster(t, 1, 1, 1)
	tb, _ := json.Marshal(topo)
	data := make([]byte, 3*snapshotChunkBytes/2)
	for i := range data {
		data[i] = byte(i / 7)
	}
	good := shardBackup{Store: "kvstore", Shard: 1, Index: 9, TopologySeq: topo.Seq, Bytes: uint64(len(data)), CRC32C: crcHex(crc32Of(data))}
	header := func(name string, edit func(*shardBackup)) *controlpb.SnapshotChunk {
		b := good
		edit(&b)
		mb, _ := json.Marshal(b)
		return &controlpb.SnapshotChunk{Header: &controlpb.SnapshotHeader{Name: name, ShardJson: mb, TopologyJson: tb}}
	}
	same := func(*shardBackup) {}
	chunks := []*controlpb.SnapshotChunk{{Data: data[:snapshotChunkBytes]}, {Data: data[snapshotChunkBytes:]}}
	for _, tc := range []struct {
		name string
		msgs []*controlpb.SnapshotChunk
		code codes.Code
		want string
	}{
		{"another name", append([]*controlpb.SnapshotChunk{header("s2", same)}, chunks...), codes.FailedPrecondition, "sent snapshot s2"},
		{"another store", append([]*controlpb.SnapshotChunk{header("s1", func(b *shardBackup) { b.Store = "x" })}, chunks...), codes.FailedPrecondition, `of store "x"`},
		{"another shard", append([]*controlpb.SnapshotChunk{header("s1", func(b *shardBackup) { b.Shard = 2 })}, chunks...), codes.FailedPrecondition, "shard 2, not s1"},
		{"another topology", append([]*controlpb.SnapshotChunk{header("s1", func(b *shardBackup) { b.TopologySeq = 5 })}, chunks...), codes.FailedPrecondition, "topology #5"},
		{"no checksum", append([]*controlpb.SnapshotChunk{header("s1", func(b *shardBackup) { b.CRC32C = "" })}, chunks...), codes.FailedPrecondition, "no checksum"},
		{"data first", chunks, codes.DataLoss, "data before the snapshot's header"},
		{"short data", []*controlpb.SnapshotChunk{header("s1", same), chunks[0]}, codes.DataLoss, "expected " + strconv.Itoa(len(data))},
		{"other data", []*controlpb.SnapshotChunk{header("s1", same), chunks[1], chunks[0]}, codes.DataLoss, "crc32c"},
		{"long data", []*controlpb.SnapshotChunk{header("s1", same), chunks[0], chunks[1], chunks[1]}, codes.DataLoss, "more than the " + strconv.Itoa(len(data)) + " bytes expected"},
		{"another topology.json", []*controlpb.SnapshotChunk{{Header: &controlpb.SnapshotHeader{Name: "s1", ShardJson: header("s1", same).Header.ShardJson, TopologyJson: []byte(`{"store":"x","seq":1}`)}}},
			codes.FailedPrecondition, `topology.json of store "x"`},
		{"a topology.json that does not parse", []*controlpb.SnapshotChunk{{Header: &controlpb.SnapshotHeader{Name: "s1", ShardJson: header("s1", same).Header.ShardJson, TopologyJson: []byte("{")}}},
			codes.DataLoss, "topology.json that does not parse"},
		{"a second header", []*controlpb.SnapshotChunk{header("s1", same), chunks[0], header("s1", same)}, codes.Internal, "second header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := startFakeHolder(t, tc.msgs)
			_, err := dialControl(t, sns[0].Addr()).CopySnapshot(context.Background(), &controlpb.CopySnapshotRequest{Store: "kvstore", Name: "s1", Shard: 1, From: from})
			if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Fatalf("got %v, want %v with %q", err, tc.code, tc.want)
			}
			if _, meta, data := snapshotFiles(t, sns[0], "s1", 1); meta != "" || data != "" {
				t.Errorf("a refused copy left files in place (json %d bytes, data %d bytes)", len(meta), len(data))
			}
			noTempFiles(t, sns[0], "s1")
		})
	}
	t.Run("the right one", func(t *testing.T) {
		from := startFakeHolder(t, append([]*controlpb.SnapshotChunk{header("s1", same)}, chunks...))
		r, err := dialControl(t, sns[0].Addr()).CopySnapshot(context.Background(), &controlpb.CopySnapshotRequest{Store: "kvstore", Name: "s1", Shard: 1, From: from})
		if err != nil || r.GetCrc32C() != good.CRC32C {
			t.Fatalf("got %v %v, want a copy with crc32c %s", r, err, good.CRC32C)
		}
		if _, _, got := snapshotFiles(t, sns[0], "s1", 1); got != string(data) {
			t.Errorf("copied data differs (%d bytes, want %d)", len(got), len(data))
		}
	})
}

// TestFetchSnapshotRefusesBadRequests: the holder side refuses a bad name
// (no path may leave ROOT/snapshots), another store and a shard it has no
// file of, and sends nothing.
func TestFetchSnapshotRefusesBadRequests(t *testing.T) {
	sns, _ := startCluster(t, 1, 1, 1)
	// A file a traversing name would reach from ROOT/snapshots/NAME.
	if err := os.WriteFile(filepath.Join(sns[0].cfg.Root, "shard-1.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		req  *controlpb.FetchSnapshotRequest
		code codes.Code
		want string
	}{
		{"a traversing name", &controlpb.FetchSnapshotRequest{Store: "kvstore", Name: "..", Shard: 1}, codes.InvalidArgument, "not valid"},
		{"a path", &controlpb.FetchSnapshotRequest{Store: "kvstore", Name: "../x", Shard: 1}, codes.InvalidArgument, "not valid"},
		{"an absolute path", &controlpb.FetchSnapshotRequest{Store: "kvstore", Name: "/etc", Shard: 1}, codes.InvalidArgument, "not valid"},
		{"no name", &controlpb.FetchSnapshotRequest{Store: "kvstore", Shard: 1}, codes.InvalidArgument, "not valid"},
		{"another store", &controlpb.FetchSnapshotRequest{Store: "other", Name: "s1", Shard: 1}, codes.FailedPrecondition, `no topology of store "other"`},
		{"no such snapshot", &controlpb.FetchSnapshotRequest{Store: "kvstore", Name: "s1", Shard: 1}, codes.NotFound, "has no snapshot s1 of shard 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream, err := dialControl(t, sns[0].Addr()).FetchSnapshot(context.Background(), tc.req)
			if err == nil {
				var m *controlpb.SnapshotChunk
				m, err = stream.Recv()
				if err == nil {
					t.Fatalf("got a chunk %v, want %v", m, tc.code)
				}
			}
			if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Fatalf("got %v, want %v with %q", err, tc.code, tc.want)
			}
		})
	}
}
