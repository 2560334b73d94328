package node

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/server"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestStoppedReplicaSaysHowToStartIt: a KV request that reaches a node
// whose replica plan stop-service stopped is told which replica is stopped
// and how to start it, as a wrong_shard error (the client then refreshes
// and goes to another replica); once started, the replica serves again.
func TestStoppedReplicaSaysHowToStartIt(t *testing.T) {
	sns, topo := startCluster(t, 3, 1, 3)
	n := sns[1]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n.ctlMu.Lock()
	n.member.Store = topo.Store // as plan deploy-sn would have done
	n.ctlMu.Unlock()
	ctl := controlRPC{n: n}
	if _, err := ctl.SetService(ctx, &controlpb.SetServiceRequest{Store: topo.Store, Shard: 1}); err != nil {
		t.Fatalf("stop rg1-rn2: %v", err)
	}
	_, err := router{n}.ShardByID(1)
	if !errors.Is(err, server.ErrWrongShard) {
		t.Fatalf("ShardByID(1) on the stopped replica: %v, want an ErrWrongShard", err)
	}
	key := &cairnpb.Key{Major: []string{"stopped"}}
	_, err = dial(t, n.Addr()).Get(ctx, &cairnpb.GetRequest{Key: key})
	st := status.Convert(err)
	for _, want := range []string{"replica rg1-rn2", "stopped by plan stop-service", "plan start-service -service rg1-rn2"} {
		if !strings.Contains(st.Message(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if st.Code() != codes.FailedPrecondition || kindOf(st) != "wrong_shard" {
		t.Errorf("error is %v/%q, want FailedPrecondition/wrong_shard (the client's cue to refresh and try another replica)", st.Code(), kindOf(st))
	}

	if _, err := ctl.SetService(ctx, &controlpb.SetServiceRequest{Store: topo.Store, Shard: 1, Run: true}); err != nil {
		t.Fatalf("start rg1-rn2: %v", err)
	}
	if _, err := (router{n}).ShardByID(1); err != nil {
		t.Fatalf("ShardByID(1) after start: %v", err)
	}
}

// kindOf returns the ErrorDetail kind of st, or "".
func kindOf(st *status.Status) string {
	for _, d := range st.Details() {
		if ed, ok := d.(*cairnpb.ErrorDetail); ok {
			return ed.GetKind()
		}
	}
	return ""
}
