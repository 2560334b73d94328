package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/topology"
)

// stoppedReplica is the answer of a node whose replica plan stop-service
// stopped, as internal/node sends it.
func stoppedReplica(context.Context, *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
	st, _ := status.New(codes.FailedPrecondition,
		"replica rg1-rn2 (shard rg1 on sn2) is stopped by plan stop-service; another replica must serve the request").
		WithDetails(&cairnpb.ErrorDetail{Kind: KindWrongShard, Action: cairnpb.ErrorDetail_ACTION_REFRESH})
	return nil, st.Err()
}

// TestRouteShardWithoutMajority: sn3 is down, sn2's replica is stopped by
// plan, and sn1 knows no leader. The write's error names every replica and
// says why no leader can be elected, whichever replica failed last.
func TestRouteShardWithoutMajority(t *testing.T) {
	fc := newFakeCluster(t, 3, 1, map[topology.NodeID]string{3: deadAddr(t)})
	c := fc.open(1)
	fc.setLeader(1, 0)
	fc.kvs[2].put = stoppedReplica
	_, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v"), WithTimeout(time.Second))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Put = %v, want an *Error", err)
	}
	want := "shard rg1 has no leader: tried sn1 (not the leader, no leader known), sn2 (stopped by plan stop-service), " +
		"sn3 (unreachable); a majority of its 3 replicas must run"
	if e.Msg != want || e.Shard != "rg1" {
		t.Errorf("Msg = %q, Shard %q\nwant %q, rg1", e.Msg, e.Shard, want)
	}
	// The code and kind are the last replica's: any of the three.
	if e.MaybeApplied || !(e.Kind == KindNotLeader || e.Kind == KindWrongShard || errors.Is(e, ErrUnavailable)) {
		t.Errorf("error %v: want a not-applied error with the last replica's code and kind", e)
	}
}

// TestRouteShardElection: every replica runs but none knows a leader yet.
func TestRouteShardElection(t *testing.T) {
	fc := newFakeCluster(t, 3, 1, nil)
	c := fc.open(1)
	fc.setLeader(1, 0)
	_, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v"), WithTimeout(500*time.Millisecond))
	var e *Error
	// On a loaded machine the deadline may fall during the last attempt:
	// that replica then reads "no answer before the deadline" and the code
	// is DeadlineExceeded; the others still say why there is no leader.
	if !errors.As(err, &e) || e.Shard != "rg1" || !strings.HasSuffix(e.Msg, "an election may be under way, retry shortly") {
		t.Fatalf("Put = %v; want an error naming the shard and an election", err)
	}
	cut := e.Code == codes.DeadlineExceeded
	if n := strings.Count(e.Msg, "not the leader, no leader known"); (!cut && (e.Kind != KindNotLeader || n != 3)) || (cut && n < 2) {
		t.Fatalf("Put = %v; want a not_leader error naming the 3 replicas (or 2 when the deadline cut the last attempt)", err)
	}
}

func TestShardFailure(t *testing.T) {
	reps := []topology.NodeID{1, 2, 3}
	down := &Error{Code: codes.Unavailable, Msg: "connection refused"}
	noLeader := &Error{Code: codes.FailedPrecondition, Kind: KindNotLeader}
	timeout := &Error{Code: codes.DeadlineExceeded, MaybeApplied: true, Msg: "context deadline exceeded"}
	for _, tc := range []struct {
		name   string
		last   *Error
		shard  topology.ShardID
		leader bool
		seen   tried
		want   string // "" when last is returned as is
	}{
		{"one replica tried, majority runs", down, 1, true, tried{1: down}, ""},
		{"two down, one untried", down, 1, true, tried{1: down, 2: down},
			"shard rg1 has no leader: tried sn1 (unreachable), sn2 (unreachable), sn3 (not tried); a majority of its 3 replicas must run"},
		{"timed-out write after two down", timeout, 1, true, tried{1: timeout, 2: down, 3: down},
			"shard rg1 has no leader: tried sn1 (no answer before the deadline), sn2 (unreachable), sn3 (unreachable); a majority of its 3 replicas must run"},
		{"a read: every replica down", down, 1, false, tried{1: down, 2: down, 3: down},
			"no replica of shard rg1 could serve the request: tried sn1 (unreachable), sn2 (unreachable), sn3 (unreachable)"},
		{"a read: two down, one untried", down, 1, false, tried{1: down, 2: down}, ""},
		{"all not leader", noLeader, 1, true, tried{1: noLeader, 2: noLeader, 3: noLeader},
			"shard rg1 has no leader: tried sn1 (not the leader, no leader known), sn2 (not the leader, no leader known), " +
				"sn3 (not the leader, no leader known); an election may be under way, retry shortly"},
		{"no shard (StoreInfo)", down, 0, false, tried{1: down, 2: down, 3: down}, ""},
		{"canceled", &Error{Code: codes.Canceled}, 1, true, tried{1: down, 2: down, 3: down}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := shardFailure(tc.last, tc.shard, reps, tc.leader, tc.seen)
			if tc.want == "" {
				if got != tc.last {
					t.Errorf("got %q, want last unchanged", got.Msg)
				}
				return
			}
			if got.Msg != tc.want {
				t.Errorf("Msg = %q\nwant  %q", got.Msg, tc.want)
			}
			if got.Code != tc.last.Code || got.Kind != tc.last.Kind || got.MaybeApplied != tc.last.MaybeApplied {
				t.Errorf("got %v, want the code, kind and MaybeApplied of %v", got, tc.last)
			}
		})
	}
}
