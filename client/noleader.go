package client

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/internal/topology"
)

// tried holds, for one operation, the last failure of each node it tried.
type tried map[topology.NodeID]*Error

// stoppedByPlanText is in the message of a node whose replica plan
// stop-service stopped (internal/node's stoppedError, sent as wrong_shard).
const stoppedByPlanText = "stopped by plan stop-service"

// replicaDown reports whether failure e says the replica is not running
// there: the node is unreachable or did not answer, it is shutting down, or
// it holds no (running) replica of the shard.
func replicaDown(e *Error) bool {
	switch {
	case e.noAnswer, e.Kind == kindShuttingDown, e.Kind == KindWrongShard:
		return true
	}
	return e.Code == codes.Unavailable && e.Kind == ""
}

// failReason says in a few words why a replica did not serve a request.
func failReason(e *Error) string {
	switch {
	case e.noAnswer:
		return "no answer in time"
	case e.Kind == KindNotLeader && e.leaderNode == 0:
		return "not the leader, no leader known"
	case e.Kind == KindNotLeader:
		return "not the leader; names " + topology.NodeName(topology.NodeID(e.leaderNode))
	case e.Kind == KindWrongShard && strings.Contains(e.Msg, stoppedByPlanText):
		return stoppedByPlanText
	case e.Kind == KindWrongShard:
		return "holds no replica of it"
	case e.Kind == kindShuttingDown:
		return "shutting down"
	case e.Code == codes.Unavailable && e.Kind == "":
		return "unreachable"
	case e.Code == codes.DeadlineExceeded:
		return "no answer before the deadline"
	case e.Kind != "":
		return e.Kind
	}
	return e.Code.String()
}

// shardFailure returns the error to report when an operation on shard gave
// up (out of time) with last as its last failure. If every replica in reps
// was tried, or too few of them run to elect a leader, it is last with a
// message naming each replica and what it answered, e.g.
//
//	shard rg1 has no leader: tried sn1 (not the leader, no leader known),
//	sn2 (stopped by plan stop-service), sn3 (unreachable); a majority of
//	its 3 replicas must run
//
// Code, Kind, Action and MaybeApplied stay those of last. Otherwise (shard
// 0, a canceled operation, or replicas not yet tried) it returns last.
func shardFailure(last *Error, shard topology.ShardID, reps []topology.NodeID, leader bool, seen tried) *Error {
	if last == nil || shard == 0 || len(reps) == 0 || last.Code == codes.Canceled {
		return last
	}
	all, down := true, 0
	for _, id := range reps {
		e, ok := seen[id]
		all = all && ok
		if ok && replicaDown(e) {
			down++
		}
	}
	majority := len(reps)/2 + 1
	lost := len(reps)-down < majority
	if !all && !(leader && lost) {
		return last
	}
	var b strings.Builder
	name := topology.ShardName(shard)
	if leader {
		fmt.Fprintf(&b, "shard %s has no leader: tried ", name)
	} else {
		fmt.Fprintf(&b, "no replica of shard %s could serve the request: tried ", name)
	}
	for i, id := range reps {
		if i > 0 {
			b.WriteString(", ")
		}
		reason := "not tried"
		if e, ok := seen[id]; ok {
			reason = failReason(e)
		}
		fmt.Fprintf(&b, "%s (%s)", topology.NodeName(id), reason)
	}
	switch {
	case leader && lost:
		fmt.Fprintf(&b, "; a majority of its %d replicas must run", len(reps))
	case leader:
		b.WriteString("; an election may be under way, retry shortly")
	}
	out := *last
	out.Msg = b.String()
	out.Shard = name
	return &out
}
