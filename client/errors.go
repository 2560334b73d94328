package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// Action says what a caller can do about an error.
type Action int

// The actions, numbered as on the wire.
const (
	ActionUnspecified Action = 0
	ActionRetry       Action = 1 // transient: the same request may succeed later
	ActionRefresh     Action = 2 // refresh topology or leader, then retry
	ActionFixInput    Action = 3 // the request is wrong; retrying will not help
	ActionNone        Action = 4 // nothing the caller can do (internal error)
)

func (a Action) String() string {
	if s, ok := cairnpb.ErrorDetail_Action_name[int32(a)]; ok {
		return strings.TrimPrefix(s, "ACTION_") // RETRY, as users know it
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Error kinds the client matches or produces itself. The server sends others;
// Kind is a stable machine name either way.
const (
	KindLimitExceeded      = "limit_exceeded"       // a key or value is over a server limit
	KindDiskFull           = "disk_full"            // a node refused a write for lack of disk
	KindConsistencyTimeout = "consistency_timeout"  // no replica met the read's consistency in time
	KindStoreMismatch      = "store_mismatch"       // the node serves a different store
	KindMultipleMajorPaths = "multiple_major_paths" // Execute ops do not share one major path
	KindMalformedKey       = "malformed_key"        // ParseKey could not read a key
	KindMalformedVersion   = "malformed_version"    // ParseVersion could not read a version
	KindNotSecure          = "not_secure"           // a login to a store that has no users (not started --secure)
	// KindInvalidKey is a key or key range the server refuses (an empty
	// major path, say); the client refuses one whose strings are not valid
	// UTF-8 itself, before sending, with this kind too.
	KindInvalidKey = "invalid_key"

	// Kinds of a replicated store. The client handles the first three
	// itself and returns them only when an operation runs out of time.
	KindNotLeader      = "not_leader"      // the node does not lead the shard; the write was not applied
	KindWrongShard     = "wrong_shard"     // the node holds no replica of the shard: the topology changed
	KindStaleTopology  = "stale_topology"  // the request was routed with an older topology than the node's
	KindDropped        = "dropped"         // a leader change dropped the write; it was not applied
	KindOutcomeUnknown = "outcome_unknown" // the write may or may not have been applied
	KindAckTimeout     = "ack_timeout"     // the write is applied on a majority, not yet on every replica

	kindShuttingDown = "shutting_down" // the node is stopping; the request was not served
	kindRejoining    = "rejoining"     // the replica rebuilds from its peers; the request was not served
)

// Sentinel errors, for errors.Is. Every error the client returns from an
// operation is an *Error (or, from Execute, an *ExecutionError), and *Error
// matches these by code or kind.
var (
	// ErrInvalidArgument matches any error with Code InvalidArgument: a
	// malformed or over-limit request that retrying will not fix.
	ErrInvalidArgument = errors.New("cairn: invalid argument")
	// ErrLimitExceeded matches errors of kind "limit_exceeded"; Error.Limit
	// names the limit (e.g. "max_value_bytes"), Max and Seen give the sizes.
	ErrLimitExceeded = errors.New("cairn: limit exceeded")
	// ErrDiskFull matches errors of kind "disk_full": a node refused a write
	// because its disk is (nearly) full.
	ErrDiskFull = errors.New("cairn: disk full")
	// ErrConsistency matches errors of kind "consistency_timeout": no replica
	// could serve the read at the requested consistency in time.
	ErrConsistency = errors.New("cairn: consistency not met in time")
	// ErrTimeout matches errors with Code DeadlineExceeded: the operation's
	// deadline passed.
	ErrTimeout = errors.New("cairn: timeout")
	// ErrUnavailable matches errors with Code Unavailable: no node could be
	// reached, or the node could not serve the request now.
	ErrUnavailable = errors.New("cairn: unavailable")
	// ErrStoreMismatch matches errors of kind "store_mismatch": a node
	// serves a store other than Config.Store.
	ErrStoreMismatch = errors.New("cairn: store mismatch")
	// ErrOutcomeUnknown matches errors with MaybeApplied set: a write that
	// may or may not have been applied, which the client did not retry.
	// Kind says more: "outcome_unknown" (the leader lost track of it, e.g.
	// it stopped), "ack_timeout" (it is applied on a majority of replicas,
	// so it is durable, but not every replica confirmed it in time), or
	// empty (the connection broke after the request was sent). Read the
	// record to find out.
	ErrOutcomeUnknown = errors.New("cairn: write outcome unknown")
)

// Error is an operation's failure as reported by the server, or by the client
// for a connection failure or input it rejects before sending.
type Error struct {
	Code   codes.Code // the gRPC status code
	Kind   string     // stable machine name, e.g. "limit_exceeded"; empty if the server sent none
	Action Action     // what the caller can do about it
	Limit  string     // for limit errors: the limit's name, e.g. "max_value_bytes"
	Max    int64      // for limit errors: the limit
	Seen   int64      // for limit errors: the size seen
	// MaybeApplied is set for a write whose outcome is unknown: the request
	// reached the server (or may have) but no answer came back. The client
	// never retries such a write; read the record to find out.
	MaybeApplied bool
	Msg          string // the server's (or client's) message
	// Shard is set when the operation ran out of replicas: no replica of
	// this shard (e.g. "rg1") could serve it, and Msg says what each
	// answered. Code and Kind are those of the last replica's failure.
	Shard string

	leaderNode uint64 // not_leader: the leader the node knows of (0: none)
	movedTo    uint64 // wrong_shard: the shard the partition moved to (0: not known)
	partitions uint32 // wrong_shard: the partition count that numbers it
	noAnswer   bool   // a bounded attempt that the client cut: the node did not answer in time
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("cairn: ")
	b.WriteString(e.Msg)
	b.WriteString(" (")
	b.WriteString(e.Code.String())
	if e.Kind != "" {
		b.WriteString(", kind ")
		b.WriteString(e.Kind)
	}
	if e.Limit != "" {
		fmt.Fprintf(&b, ", limit %s max %d seen %d", e.Limit, e.Max, e.Seen)
	}
	if e.Action != ActionUnspecified {
		b.WriteString(", action ")
		b.WriteString(e.Action.String())
	}
	b.WriteString(")")
	if e.MaybeApplied {
		b.WriteString("; the write may have been applied")
	}
	return b.String()
}

// Is makes errors.Is match e against the package's sentinel errors by code
// or kind, and against context.DeadlineExceeded and context.Canceled by code.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrInvalidArgument:
		return e.Code == codes.InvalidArgument
	case ErrLimitExceeded:
		return e.Kind == KindLimitExceeded
	case ErrDiskFull:
		return e.Kind == KindDiskFull
	case ErrConsistency:
		return e.Kind == KindConsistencyTimeout
	case ErrStoreMismatch:
		return e.Kind == KindStoreMismatch
	case ErrOutcomeUnknown:
		return e.MaybeApplied
	case ErrTimeout, context.DeadlineExceeded:
		return e.Code == codes.DeadlineExceeded
	case ErrUnavailable:
		return e.Code == codes.Unavailable
	case context.Canceled:
		return e.Code == codes.Canceled
	}
	return false
}

// ExecutionError is returned by Execute when an operation marked
// AbortIfUnsuccessful was not done. Nothing in the batch was written.
type ExecutionError struct {
	Index  int    // the failed operation's index in the ops slice
	Result Result // its result (Previous is set if the op asked for it)
}

func (e *ExecutionError) Error() string {
	return fmt.Sprintf("cairn: execute: operation %d was not done and aborted the batch; nothing was written", e.Index)
}

// maybeAppliedCodes are the codes of a detail-less status after which a sent
// write may or may not have been applied.
var maybeAppliedCodes = map[codes.Code]bool{
	codes.Unavailable: true, codes.DeadlineExceeded: true, codes.Canceled: true,
	codes.Unknown: true, codes.Internal: true, codes.Aborted: true, codes.DataLoss: true,
}

// convertError turns an RPC error into an *Error. write and sent say whether
// the call was a write and whether its request left the client; together
// they decide MaybeApplied when the server attached no detail.
func convertError(err error, write, sent bool) *Error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err)
	}
	e := &Error{Code: st.Code(), Msg: st.Message()}
	for _, d := range st.Details() {
		if ed, ok := d.(*cairnpb.ErrorDetail); ok {
			e.Kind = ed.GetKind()
			e.Action = Action(ed.GetAction())
			e.Limit = ed.GetLimit()
			e.Max = ed.GetMax()
			e.Seen = ed.GetSeen()
			e.MaybeApplied = ed.GetMaybeApplied()
			e.leaderNode = ed.GetLeaderNode()
			e.movedTo, e.partitions = ed.GetMovedToShard(), ed.GetPartitions()
			return e
		}
	}
	// No detail: the status came from gRPC itself (a connection failure, a
	// deadline) rather than from a Cairn handler.
	switch e.Code {
	case codes.Unavailable, codes.DeadlineExceeded:
		e.Action = ActionRetry
	case codes.InvalidArgument:
		e.Action = ActionFixInput
	default:
		e.Action = ActionNone
	}
	e.MaybeApplied = write && sent && maybeAppliedCodes[e.Code]
	return e
}

// KindInvalidConfig is the kind of the error Open returns for a bad Config.
const KindInvalidConfig = "invalid_config"

func invalidConfig(err error) *Error {
	return &Error{Code: codes.InvalidArgument, Kind: KindInvalidConfig, Action: ActionFixInput,
		Msg: "config: " + strings.ReplaceAll(err.Error(), "\n", "; ")}
}
