package server

import (
	"fmt"
	"github.com/cairndb/cairn/api/fieldrec"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func keyOf(k *cairnpb.Key) keys.Key { return keys.Key{Major: k.GetMajor(), Minor: k.GetMinor()} }

// checkEnum rejects enum numbers this server does not know.
func checkEnum(field string, v protoreflect.Enum) error {
	if v.Descriptor().Values().ByNumber(v.Number()) == nil {
		return badInput("unknown_enum", "%s: unknown value %d", field, v.Number())
	}
	return nil
}

// Every string a client sends is checked for valid UTF-8 here, since the
// protobuf runtime no longer does (kv.proto sets utf8_validation = NONE so
// that such a request reaches a handler instead of failing to unmarshal):
//
//	header.store                          checkHeader, first in every handler
//	key, put.key, delete.key, parent      checkKey; storeScan's CheckParent (keys.Key.CheckUTF8)
//	range.start, range.end, range.prefix  checkRange (keys.Range.Validate)
//
// Key material fails with kind invalid_key, other strings with
// invalid_argument; the message names the field. TestInvalidUTF8OverWire
// sends invalid UTF-8 in each of them and checks that its list of string
// fields is every string field of every request.

// checkHeader validates the request header before anything else reads it.
func checkHeader(h *cairnpb.RequestHeader) error {
	if !utf8.ValidString(h.GetStore()) {
		return badInput("invalid_argument", "header.store is not valid UTF-8 (%q)", h.GetStore())
	}
	return nil
}

// checkKey validates a record key (limits, UTF-8) and names field in the
// error.
func (s *Server) checkKey(field string, k *cairnpb.Key) error {
	if k == nil {
		return badInput("invalid_key", "%s: missing key", field)
	}
	if err := s.limits.CheckKey(keyOf(k)); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

func (s *Server) checkPut(op *cairnpb.PutOp) error {
	if op == nil {
		return badInput("invalid_argument", "put: missing operation")
	}
	if err := s.checkKey("put.key", op.GetKey()); err != nil {
		return err
	}
	if err := s.limits.CheckValue(op.GetValue()); err != nil {
		return err
	}
	if err := checkEnum("put.condition", op.GetCondition()); err != nil {
		return err
	}
	if err := checkEnum("put.return", op.GetReturn()); err != nil {
		return err
	}
	if op.GetCondition() == cairnpb.Condition_CONDITION_IF_VERSION {
		if _, _, err := storage.ParseVersion(op.GetMatchVersion()); err != nil {
			return err
		}
	}
	if op.GetTtlMs() < 0 {
		return badInput("invalid_argument", "put.ttl_ms: negative TTL %d", op.GetTtlMs())
	}
	if op.GetMergeFields() {
		if err := fieldrec.Check(op.GetValue()); err != nil {
			return badInput("invalid_argument", "put.value: merge_fields takes a field record (api/fieldrec): %v", err)
		}
	}
	return nil
}

func (s *Server) checkDelete(op *cairnpb.DeleteOp) error {
	if op == nil {
		return badInput("invalid_argument", "delete: missing operation")
	}
	if err := s.checkKey("delete.key", op.GetKey()); err != nil {
		return err
	}
	if err := checkEnum("delete.return", op.GetReturn()); err != nil {
		return err
	}
	switch op.GetCondition() {
	case cairnpb.Condition_CONDITION_UNSPECIFIED:
	case cairnpb.Condition_CONDITION_IF_VERSION:
		if _, _, err := storage.ParseVersion(op.GetMatchVersion()); err != nil {
			return err
		}
	default:
		return badInput("invalid_argument", "delete.condition: %v is not a delete condition (only IF_VERSION)", op.GetCondition())
	}
	return nil
}

func (s *Server) checkOps(ops []*cairnpb.Operation) error {
	if len(ops) == 0 {
		return badInput("invalid_argument", "execute: no operations")
	}
	var major []string
	for i, op := range ops {
		var k *cairnpb.Key
		switch o := op.GetOp().(type) {
		case *cairnpb.Operation_Put:
			if err := s.checkPut(o.Put); err != nil {
				return fmt.Errorf("execute: operation %d: %w", i, err)
			}
			k = o.Put.GetKey()
		case *cairnpb.Operation_Delete:
			if err := s.checkDelete(o.Delete); err != nil {
				return fmt.Errorf("execute: operation %d: %w", i, err)
			}
			k = o.Delete.GetKey()
		default:
			return badInput("invalid_argument", "execute: operation %d is neither put nor delete", i)
		}
		if i == 0 {
			major = k.GetMajor()
		} else if !slices.Equal(major, k.GetMajor()) {
			return badInput("multiple_major_paths",
				"execute: operation %d has major path %s but operation 0 has %s; all operations must share one major path",
				i, keys.Key{Major: k.GetMajor()}, keys.Key{Major: major})
		}
	}
	return nil
}

func checkDurability(d *cairnpb.Durability) (replica.WriteOptions, error) {
	for _, e := range []struct {
		f string
		v protoreflect.Enum
	}{{"durability.master_sync", d.GetMasterSync()}, {"durability.replica_sync", d.GetReplicaSync()}, {"durability.replica_ack", d.GetReplicaAck()}} {
		if err := checkEnum(e.f, e.v); err != nil {
			return replica.WriteOptions{}, err
		}
	}
	w := replica.WriteOptions{Master: syncMode(d.GetMasterSync(), storage.WriteNoSync), Replica: syncMode(d.GetReplicaSync(), storage.NoSync)}
	switch d.GetReplicaAck() {
	case cairnpb.ReplicaAckPolicy_REPLICA_ACK_POLICY_ALL:
		w.Ack = replica.AckAll
	case cairnpb.ReplicaAckPolicy_REPLICA_ACK_POLICY_NONE:
		w.Ack = replica.AckNone
	}
	return w, nil
}

func syncMode(p cairnpb.SyncPolicy, def storage.SyncMode) storage.SyncMode {
	switch p {
	case cairnpb.SyncPolicy_SYNC_POLICY_SYNC:
		return storage.Sync
	case cairnpb.SyncPolicy_SYNC_POLICY_WRITE_NO_SYNC:
		return storage.WriteNoSync
	case cairnpb.SyncPolicy_SYNC_POLICY_NO_SYNC:
		return storage.NoSync
	}
	return def
}

func checkConsistency(c *cairnpb.Consistency) (replica.Consistency, error) {
	if err := checkEnum("consistency.kind", c.GetKind()); err != nil {
		return replica.Consistency{}, err
	}
	if c.GetTimeoutMs() < 0 || c.GetPermissibleLagMs() < 0 {
		return replica.Consistency{}, badInput("invalid_argument", "consistency: negative timeout or lag")
	}
	out := replica.Consistency{Timeout: time.Duration(c.GetTimeoutMs()) * time.Millisecond}
	switch c.GetKind() {
	case cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE:
		out.Kind = replica.Absolute
	case cairnpb.ConsistencyKind_CONSISTENCY_KIND_TIME_LAG:
		out.Kind, out.Lag = replica.TimeLag, time.Duration(c.GetPermissibleLagMs())*time.Millisecond
	case cairnpb.ConsistencyKind_CONSISTENCY_KIND_VERSION:
		if _, _, err := storage.ParseVersion(c.GetVersion()); err != nil {
			return replica.Consistency{}, err
		}
		out.Kind, out.Version = replica.AtVersion, c.GetVersion()
	}
	return out, nil
}

func checkDepth(d cairnpb.Depth) (keys.Depth, error) {
	if err := checkEnum("depth", d); err != nil {
		return 0, err
	}
	if d == cairnpb.Depth_DEPTH_UNSPECIFIED {
		return keys.ParentAndDescendants, nil
	}
	return keys.Depth(d), nil
}

func checkRange(r *cairnpb.KeyRange) (*keys.Range, error) {
	kr := storage.RangeFromPB(r)
	if err := kr.Validate(); err != nil {
		return nil, fmt.Errorf("range: %w", err)
	}
	return kr, nil
}
