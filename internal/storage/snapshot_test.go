package storage

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage/commandpb"
)

// testPut puts /p/-/q.
func testPut() *commandpb.Command {
	return &commandpb.Command{NowMs: 1, Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{
		Ops: []*cairnpb.Operation{putOp("/p/-/q", "v", cairnpb.Condition_CONDITION_UNSPECIFIED, nil)}}}}
}

var allRecords = []Span{{[]byte{'r'}, []byte{'r' + 1}}}

// TestExportShardIndex: the data and the applied index come from one view.
func TestExportShardIndex(t *testing.T) {
	e := testEngine(t)
	if data, idx, err := e.ExportShard(3, allRecords); err != nil || idx != 0 || len(data) != 0 {
		t.Fatalf("empty shard: %d bytes at %d, %v", len(data), idx, err)
	}
	for i := uint64(1); i <= 7; i++ {
		b := e.NewShardBatch(3, testOrigin)
		if r := b.Apply(i, testPut()); r.Err != nil {
			t.Fatal(r.Err)
		}
		if err := b.Commit(NoSync); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	data, idx, err := e.ExportShard(3, allRecords)
	if err != nil || idx != 7 {
		t.Fatalf("export at %d, %v; want 7", idx, err)
	}
	plain, _ := e.ExportSpans(allRecords)
	if !bytes.Equal(data, plain) {
		t.Fatal("ExportShard's data differs from ExportSpans'")
	}
	if top, err := SnapshotMaxIndex(data); err != nil || top != 7 {
		t.Fatalf("SnapshotMaxIndex = %d, %v; want 7", top, err)
	}
}

func TestSnapshotMaxIndex(t *testing.T) {
	chunk := func(k, v []byte) []byte {
		b := binary.AppendUvarint(nil, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(v)))
		return append(b, v...)
	}
	rec := func(origin, index uint64) []byte {
		return encodeRecord(nil, MakeVersion(origin, index), 0, []byte("v"))
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		want    uint64
		wantErr bool
	}{
		{"empty", nil, 0, false},
		{"records of two origins", append(chunk([]byte("ra"), rec(1, 40)), chunk([]byte("rb"), rec(2, 90))...), 90, false},
		{"expiry entries are skipped", append(chunk([]byte("ra"), rec(1, 40)), chunk([]byte("x12345678ra"), nil)...), 40, false},
		{"truncated", chunk([]byte("ra"), rec(1, 40))[:10], 0, true},
		{"not a record", chunk([]byte("ra"), []byte{9, 9}), 0, true},
	} {
		got, err := SnapshotMaxIndex(tc.data)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: %d, %v; want %d (error %v)", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

// FuzzSnapshotMaxIndex: snapshot data read from a backup file must never
// panic the decoder.
func FuzzSnapshotMaxIndex(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 'r', 'a', 26, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 'v'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = SnapshotMaxIndex(data)
	})
}
