package storage

import (
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"google.golang.org/protobuf/proto"
)

// FuzzApplyCommand decodes arbitrary bytes as a command, as a replica would
// read a log entry, and applies it: decoding and applying must never panic,
// and a batch that applies must return one result per operation.
func FuzzApplyCommand(f *testing.F) {
	for _, c := range []*commandpb.Command{
		{NowMs: 1, Body: &commandpb.Command_Batch{Batch: &commandpb.Batch{Ops: []*cairnpb.Operation{putOp("/a/-/b", "v", cairnpb.Condition_CONDITION_IF_ABSENT, nil)}}}},
		{NowMs: 1, Body: &commandpb.Command_MultiDelete{MultiDelete: &commandpb.MultiDelete{Parent: pbKey("/a")}}},
		{NowMs: 1, Body: &commandpb.Command_Expire{Expire: &commandpb.Expire{Records: []*commandpb.ExpiredRecord{{StorageKey: []byte("r"), ExpirationMs: 1}}}}},
	} {
		b, _ := proto.Marshal(c)
		f.Add(b)
	}
	f.Add([]byte{0xff, 0x00, 0x12})
	e := testEngine(f)
	var index uint64
	f.Fuzz(func(t *testing.T, data []byte) {
		var cmd commandpb.Command
		if err := proto.Unmarshal(data, &cmd); err != nil {
			return
		}
		b := e.NewBatch(testOrigin)
		defer b.Close()
		index++
		r := b.Apply(index, &cmd)
		if bt, ok := cmd.GetBody().(*commandpb.Command_Batch); ok && r.Err == nil && !r.Aborted && len(r.Ops) != len(bt.Batch.GetOps()) {
			t.Fatalf("%d results for %d operations", len(r.Ops), len(bt.Batch.GetOps()))
		}
		if err := b.Commit(NoSync); err != nil {
			t.Fatal(err)
		}
	})
}
