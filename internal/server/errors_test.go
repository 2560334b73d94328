package server

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/topology"
)

// A partition that moved answers wrong_shard naming its new shard, the
// partition count that numbers it and the node's topology seq; one that is
// still moving in answers partition_moving, to retry.
func TestPartitionErrorStatus(t *testing.T) {
	topo := &topology.Topology{Seq: 7}
	for _, tc := range []struct {
		err            error
		code           codes.Code
		kind           string
		movedTo, parts uint64
		action         cairnpb.ErrorDetail_Action
	}{
		{&storage.PartitionError{Shard: 1, Peer: 3, Partition: 5, N: 100, State: storage.PartGone}, codes.FailedPrecondition, "wrong_shard", 3, 100, cairnpb.ErrorDetail_ACTION_REFRESH},
		{&storage.PartitionError{Shard: 1, Partition: 5, N: 100}, codes.FailedPrecondition, "wrong_shard", 0, 0, cairnpb.ErrorDetail_ACTION_REFRESH},
		{&storage.PartitionError{Shard: 3, Peer: 1, Partition: 5, N: 100, State: storage.PartIncoming}, codes.Unavailable, "partition_moving", 0, 0, cairnpb.ErrorDetail_ACTION_RETRY},
	} {
		st := status.Convert(toStatusWith(fmt.Errorf("put: %w", tc.err), topo))
		if st.Code() != tc.code || len(st.Details()) != 1 {
			t.Fatalf("%v: status %v with %d details, want %v with one", tc.err, st.Code(), len(st.Details()), tc.code)
		}
		d := st.Details()[0].(*cairnpb.ErrorDetail)
		if d.GetKind() != tc.kind || d.GetAction() != tc.action || d.GetMovedToShard() != tc.movedTo ||
			uint64(d.GetPartitions()) != tc.parts || d.GetTopologySeq() != 7 {
			t.Errorf("%v: detail %v; want kind %s, action %v, moved_to_shard %d, partitions %d, topology_seq 7",
				tc.err, d, tc.kind, tc.action, tc.movedTo, tc.parts)
		}
	}
}
