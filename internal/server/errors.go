package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// inputError is a request the client must fix. kind is the ErrorDetail kind.
type inputError struct {
	kind string
	msg  string
}

func (e *inputError) Error() string { return e.msg }

func badInput(kind, format string, args ...any) error {
	return &inputError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// errStoreMismatch is returned when a request names another store.
var errStoreMismatch = errors.New("request is for another store")

type mapping struct {
	code   codes.Code
	kind   string
	action cairnpb.ErrorDetail_Action
}

var sentinels = []struct {
	err error
	m   mapping
}{
	{storage.ErrBadResume, mapping{codes.InvalidArgument, "bad_resume", cairnpb.ErrorDetail_ACTION_FIX_INPUT}},
	{storage.ErrBadVersion, mapping{codes.InvalidArgument, "bad_version", cairnpb.ErrorDetail_ACTION_FIX_INPUT}},
	{storage.ErrNotFieldRecord, mapping{codes.InvalidArgument, "not_field_record", cairnpb.ErrorDetail_ACTION_FIX_INPUT}},
	{storage.ErrBadCommand, mapping{codes.InvalidArgument, "invalid_argument", cairnpb.ErrorDetail_ACTION_FIX_INPUT}},
	{keys.ErrMalformed, mapping{codes.InvalidArgument, "invalid_key", cairnpb.ErrorDetail_ACTION_FIX_INPUT}},
	{keys.ErrInvalid, mapping{codes.InvalidArgument, "invalid_key", cairnpb.ErrorDetail_ACTION_FIX_INPUT}},
	{replica.ErrForeignVersion, mapping{codes.InvalidArgument, "foreign_version", cairnpb.ErrorDetail_ACTION_FIX_INPUT}},
	{storage.ErrTooLarge, mapping{codes.FailedPrecondition, "result_too_large", cairnpb.ErrorDetail_ACTION_FIX_INPUT}},
	{errStoreMismatch, mapping{codes.FailedPrecondition, "store_mismatch", cairnpb.ErrorDetail_ACTION_FIX_INPUT}},
	{storage.ErrDiskFull, mapping{codes.ResourceExhausted, "disk_full", cairnpb.ErrorDetail_ACTION_RETRY}},
	{replica.ErrNotLeader, mapping{codes.FailedPrecondition, "not_leader", cairnpb.ErrorDetail_ACTION_REFRESH}},
	{ErrWrongShard, mapping{codes.FailedPrecondition, "wrong_shard", cairnpb.ErrorDetail_ACTION_REFRESH}},
	{storage.ErrNotServed, mapping{codes.FailedPrecondition, "wrong_shard", cairnpb.ErrorDetail_ACTION_REFRESH}},
	{storage.ErrMoving, mapping{codes.Unavailable, "partition_moving", cairnpb.ErrorDetail_ACTION_RETRY}},
	{ErrStaleTopology, mapping{codes.FailedPrecondition, "stale_topology", cairnpb.ErrorDetail_ACTION_REFRESH}},
	{replica.ErrDropped, mapping{codes.Unavailable, "dropped", cairnpb.ErrorDetail_ACTION_RETRY}},
	{replica.ErrRejoining, mapping{codes.Unavailable, "rejoining", cairnpb.ErrorDetail_ACTION_RETRY}},
	{replica.ErrNotVoter, mapping{codes.Unavailable, "not_voter", cairnpb.ErrorDetail_ACTION_RETRY}},
	{replica.ErrUnknownOutcome, mapping{codes.Unknown, "outcome_unknown", cairnpb.ErrorDetail_ACTION_NONE}},
	{replica.ErrAckTimeout, mapping{codes.DeadlineExceeded, "ack_timeout", cairnpb.ErrorDetail_ACTION_NONE}},
	{replica.ErrConsistency, mapping{codes.Unavailable, "consistency_timeout", cairnpb.ErrorDetail_ACTION_RETRY}},
	{replica.ErrClosed, mapping{codes.Unavailable, "shutting_down", cairnpb.ErrorDetail_ACTION_RETRY}},
	{context.DeadlineExceeded, mapping{codes.DeadlineExceeded, "timeout", cairnpb.ErrorDetail_ACTION_RETRY}},
	{context.Canceled, mapping{codes.Canceled, "canceled", cairnpb.ErrorDetail_ACTION_NONE}},
	{storage.ErrCorrupt, mapping{codes.DataLoss, "corruption", cairnpb.ErrorDetail_ACTION_NONE}},
	{keys.ErrCorrupt, mapping{codes.DataLoss, "corruption", cairnpb.ErrorDetail_ACTION_NONE}},
}

// status maps an error to a gRPC status, naming the leader's address for
// not_leader errors and the node's topology seq.
func (s *Server) status(err error) error { return toStatusWith(err, s.router.Topology()) }

// toStatus maps an error to a gRPC status with an ErrorDetail.
func toStatus(err error) error { return toStatusWith(err, nil) }

// ToStatus maps an error to the gRPC status and ErrorDetail a client sees,
// for a node that answers before a request reaches its Server (a storage
// node rebuilding its engine answers replica.ErrRejoining).
func ToStatus(err error) error { return toStatus(err) }

// toStatusWith maps err, with what topology t (nil: none) tells.
func toStatusWith(err error, t *topology.Topology) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	m := mapping{codes.Internal, "internal", cairnpb.ErrorDetail_ACTION_NONE}
	d := &cairnpb.ErrorDetail{}
	var le *keys.LimitError
	var ie *inputError
	switch {
	case errors.As(err, &le):
		m = mapping{codes.InvalidArgument, "limit_exceeded", cairnpb.ErrorDetail_ACTION_FIX_INPUT}
		d.Limit, d.Max, d.Seen = le.Limit, int64(le.Max), int64(le.Seen)
	case errors.As(err, &ie):
		m = mapping{codes.InvalidArgument, ie.kind, cairnpb.ErrorDetail_ACTION_FIX_INPUT}
	default:
		for _, s := range sentinels {
			if errors.Is(err, s.err) {
				m = s.m
				break
			}
		}
	}
	d.Kind, d.Action = m.kind, m.action
	d.MaybeApplied = errors.Is(err, replica.ErrUnknownOutcome) || errors.Is(err, replica.ErrAckTimeout)
	var pe *storage.PartitionError
	if errors.As(err, &pe) && pe.State == storage.PartGone {
		d.MovedToShard, d.Partitions = pe.Peer, pe.N
	}
	var nl *replica.NotLeaderError
	if errors.As(err, &nl) {
		d.LeaderNode = nl.Leader
		if t != nil {
			n, _ := t.Node(topology.NodeID(nl.Leader))
			d.LeaderAddr = n.Addr
		}
	}
	if t != nil {
		d.TopologySeq = t.Seq
	}
	// The status travels as a google.rpc.Status, a proto3 message whose
	// marshal fails on invalid UTF-8, and grpc-go then silently drops the
	// details. Messages quote client strings with %q, so this is a second
	// line of defence.
	msg := strings.ToValidUTF8(err.Error(), "\uFFFD")
	st, derr := status.New(m.code, msg).WithDetails(d)
	if derr != nil {
		return status.Error(m.code, msg)
	}
	return st.Err()
}
