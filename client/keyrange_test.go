package client

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/api/cairnpb"
)

func TestKeyRangeConstructors(t *testing.T) {
	for _, tc := range []struct {
		r    *KeyRange
		want *cairnpb.KeyRange
		str  string
	}{
		{nil, nil, "(all)"},
		{Between("a", true, "c", false),
			&cairnpb.KeyRange{HasStart: true, Start: "a", StartInclusive: true, HasEnd: true, End: "c"}, `["a", "c")`},
		{Between("a", false, "c", true),
			&cairnpb.KeyRange{HasStart: true, Start: "a", HasEnd: true, End: "c", EndInclusive: true}, `("a", "c"]`},
		{From("m", true), &cairnpb.KeyRange{HasStart: true, Start: "m", StartInclusive: true}, `["m", +inf)`},
		{From("m", false), &cairnpb.KeyRange{HasStart: true, Start: "m"}, `("m", +inf)`},
		{To("m", true), &cairnpb.KeyRange{HasEnd: true, End: "m", EndInclusive: true}, `(-inf, "m"]`},
		{To("", false), &cairnpb.KeyRange{HasEnd: true}, `(-inf, "")`},
		{Prefix("ab"), &cairnpb.KeyRange{HasPrefix: true, Prefix: "ab"}, `prefix "ab"`},
		{Prefix(""), &cairnpb.KeyRange{HasPrefix: true}, `prefix ""`},
	} {
		got := tc.r.toPB()
		if (got == nil) != (tc.want == nil) || (got != nil && !proto.Equal(got, tc.want)) {
			t.Errorf("%v.toPB() = %v, want %v", tc.r, got, tc.want)
		}
		if s := tc.r.String(); s != tc.str {
			t.Errorf("String() = %s, want %s", s, tc.str)
		}
	}
}

func TestEnumsMatchWire(t *testing.T) {
	// The client's enums are numbered as on the wire and converted by a cast.
	for _, tc := range []struct{ got, want string }{
		{cairnpb.Depth(ChildrenOnly).String(), "DEPTH_CHILDREN_ONLY"},
		{cairnpb.Depth(ParentAndChildren).String(), "DEPTH_PARENT_AND_CHILDREN"},
		{cairnpb.Depth(DescendantsOnly).String(), "DEPTH_DESCENDANTS_ONLY"},
		{cairnpb.Depth(ParentAndDescendants).String(), "DEPTH_PARENT_AND_DESCENDANTS"},
		{cairnpb.Depth(Depth(0)).String(), "DEPTH_UNSPECIFIED"},
		{cairnpb.Direction(Forward).String(), "DIRECTION_FORWARD"},
		{cairnpb.Direction(Reverse).String(), "DIRECTION_REVERSE"},
		{cairnpb.Direction(Direction(0)).String(), "DIRECTION_UNSPECIFIED"},
		{cairnpb.SyncPolicy(Sync).String(), "SYNC_POLICY_SYNC"},
		{cairnpb.SyncPolicy(WriteNoSync).String(), "SYNC_POLICY_WRITE_NO_SYNC"},
		{cairnpb.SyncPolicy(NoSync).String(), "SYNC_POLICY_NO_SYNC"},
		{cairnpb.ReplicaAckPolicy(AckAll).String(), "REPLICA_ACK_POLICY_ALL"},
		{cairnpb.ReplicaAckPolicy(AckSimpleMajority).String(), "REPLICA_ACK_POLICY_SIMPLE_MAJORITY"},
		{cairnpb.ReplicaAckPolicy(AckNone).String(), "REPLICA_ACK_POLICY_NONE"},
		{cairnpb.ReturnValueVersion(ReturnNone).String(), "RETURN_VALUE_VERSION_NONE"},
		{cairnpb.ReturnValueVersion(ReturnValue).String(), "RETURN_VALUE_VERSION_VALUE"},
		{cairnpb.ReturnValueVersion(ReturnVersion).String(), "RETURN_VALUE_VERSION_VERSION"},
		{cairnpb.ReturnValueVersion(ReturnAll).String(), "RETURN_VALUE_VERSION_ALL"},
		{cairnpb.ReturnValueVersion(ReturnValueVersion(0)).String(), "RETURN_VALUE_VERSION_UNSPECIFIED"},
		{cairnpb.ErrorDetail_Action(ActionFixInput).String(), "ACTION_FIX_INPUT"},
	} {
		if tc.got != tc.want {
			t.Errorf("wire name %s, want %s", tc.got, tc.want)
		}
	}
}
