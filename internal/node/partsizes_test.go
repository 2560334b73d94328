package node

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestPartitionSizes: a node reports a size for each partition of a shard
// it hosts, in its numbering or a split's (children of each), and refuses
// a shard it does not host, another store, and a count that is not a
// multiple of its own.
func TestPartitionSizes(t *testing.T) {
	sns, topo := startCluster(t, 2, 2, 1) // rg1 on sn1, rg2 on sn2; 20 partitions
	n := sns[0]
	n.ctlMu.Lock()
	n.member.Store = topo.Store // as plan deploy-sn would have done
	n.ctlMu.Unlock()
	ctl := controlRPC{n: n}
	ctx := context.Background()
	keysOf := func(r *controlpb.PartitionSizesReply) []uint32 {
		var out []uint32
		for p, b := range r.GetBytes() {
			if b < 0 {
				t.Errorf("partition %d: %d bytes", p, b)
			}
			out = append(out, p)
		}
		slices.Sort(out)
		return out
	}
	var own, split []uint32
	for _, p := range topo.PartitionsOf(1) {
		own = append(own, uint32(p))
		split = append(split, 2*uint32(p), 2*uint32(p)+1)
	}
	for _, tc := range []struct {
		name  string
		req   *controlpb.PartitionSizesRequest
		count uint32
		parts []uint32
		code  codes.Code
		msg   string
	}{
		{"own numbering", &controlpb.PartitionSizesRequest{Store: topo.Store, Shard: 1}, 20, own, codes.OK, ""},
		{"split numbering", &controlpb.PartitionSizesRequest{Store: topo.Store, Shard: 1, Partitions: 40}, 40, split, codes.OK, ""},
		{"a shard not hosted", &controlpb.PartitionSizesRequest{Store: topo.Store, Shard: 2}, 0, nil, codes.FailedPrecondition, "sn1 hosts no replica of rg2"},
		{"another store", &controlpb.PartitionSizesRequest{Store: "other", Shard: 1}, 0, nil, codes.FailedPrecondition, `not "other"`},
		{"not a multiple", &controlpb.PartitionSizesRequest{Store: topo.Store, Shard: 1, Partitions: 30}, 0, nil, codes.InvalidArgument, "30 partitions is not a multiple of this store's 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ctl.PartitionSizes(ctx, tc.req)
			if status.Code(err) != tc.code || (tc.msg != "" && !strings.Contains(err.Error(), tc.msg)) {
				t.Fatalf("error %v, want %v containing %q", err, tc.code, tc.msg)
			}
			if err != nil {
				return
			}
			if got := keysOf(r); r.GetPartitions() != tc.count || !slices.Equal(got, tc.parts) {
				t.Errorf("%d partitions %v, want %d %v", r.GetPartitions(), got, tc.count, tc.parts)
			}
		})
	}
}
