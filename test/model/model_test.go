package model

import (
	"slices"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
)

func pk(major []string, minor ...string) *cairnpb.Key {
	return &cairnpb.Key{Major: major, Minor: minor}
}

func putOp(k *cairnpb.Key, v string, c cairnpb.Condition, rv cairnpb.ReturnValueVersion) *cairnpb.Operation {
	return &cairnpb.Operation{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: k, Value: []byte(v), Condition: c, Return: rv}}}
}

func ver(i byte) []byte { return []byte{i} }

// TestExecuteSeesEarlierOps checks that later operations of an execute see
// the earlier ones' effects, and that an abort writes nothing.
func TestExecuteSeesEarlierOps(t *testing.T) {
	m := New()
	k := pk([]string{"a"}, "x")
	r := m.Execute([]*cairnpb.Operation{
		putOp(k, "1", cairnpb.Condition_CONDITION_UNSPECIFIED, 0),
		putOp(k, "2", cairnpb.Condition_CONDITION_IF_PRESENT, cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_ALL),
	}, Clock{}, func(i int) []byte { return ver(byte(i + 1)) })
	if !r.Committed || !r.Results[1].Success || string(r.Results[1].PreviousValue) != "1" || string(r.Results[1].PreviousVersion) != "\x01" {
		t.Fatalf("execute = %+v", r)
	}
	if rec, _ := m.Get(keys.New([]string{"a"}, "x")); string(rec.Value) != "2" || string(rec.Version) != "\x02" {
		t.Fatalf("record = %+v", rec)
	}

	abort := putOp(k, "4", cairnpb.Condition_CONDITION_IF_ABSENT, cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_VALUE)
	abort.AbortIfUnsuccessful = true
	r = m.Execute([]*cairnpb.Operation{putOp(pk([]string{"a"}, "y"), "3", 0, 0), abort}, Clock{}, func(int) []byte { return ver(9) })
	if r.Committed || r.FailedIndex != 1 || !r.Failed.PreviousExists || string(r.Failed.PreviousValue) != "2" {
		t.Fatalf("aborted execute = %+v", r)
	}
	if m.Len() != 1 {
		t.Fatalf("aborted execute wrote: %d records", m.Len())
	}
}

// TestSelection checks multiGet, multiDelete and storeScan selection on a
// universe where a major path and a minor path spell the same full path.
func TestSelection(t *testing.T) {
	m := New()
	for i, k := range []*cairnpb.Key{
		pk([]string{"a"}), pk([]string{"a"}, "b"), pk([]string{"a"}, "b", "c"), pk([]string{"a"}, "ab"),
		pk([]string{"a"}, ""), pk([]string{"a", "b"}), pk([]string{"a", "b"}, "c"), pk([]string{"c"}, "a"),
	} {
		m.Put(&cairnpb.PutOp{Key: k}, Clock{}, ver(byte(i)))
	}
	names := func(rs []Record) []string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Key.String())
		}
		return s
	}
	for _, tc := range []struct {
		name string
		got  []Record
		want []string
	}{
		{"multiGet all", m.MultiGet(&cairnpb.MultiGetRequest{Parent: pk([]string{"a"})}),
			[]string{"/a", "/a/-/", "/a/-/ab", "/a/-/b", "/a/-/b/c"}},
		{"multiGet reverse children", m.MultiGet(&cairnpb.MultiGetRequest{Parent: pk([]string{"a"}), Depth: cairnpb.Depth_DEPTH_CHILDREN_ONLY, Direction: cairnpb.Direction_DIRECTION_REVERSE}),
			[]string{"/a/-/b", "/a/-/ab", "/a/-/"}},
		{"multiGet prefix a", m.MultiGet(&cairnpb.MultiGetRequest{Parent: pk([]string{"a"}), Range: &cairnpb.KeyRange{HasPrefix: true, Prefix: "a"}}),
			[]string{"/a", "/a/-/ab"}},
		{"multiGet minor parent", m.MultiGet(&cairnpb.MultiGetRequest{Parent: pk([]string{"a"}, "b"), Depth: cairnpb.Depth_DEPTH_DESCENDANTS_ONLY}),
			[]string{"/a/-/b/c"}},
		{"multiGet range (, b]", m.MultiGet(&cairnpb.MultiGetRequest{Parent: pk([]string{"a"}), Depth: cairnpb.Depth_DEPTH_CHILDREN_ONLY, Range: &cairnpb.KeyRange{HasStart: true, Start: "", HasEnd: true, End: "b", EndInclusive: true}}),
			[]string{"/a/-/ab", "/a/-/b"}},
		{"storeScan a", m.StoreScan(&cairnpb.StoreScanRequest{Parent: pk([]string{"a"})}),
			[]string{"/a", "/a/-/", "/a/-/ab", "/a/-/b", "/a/-/b/c", "/a/b", "/a/b/-/c"}},
		{"storeScan a children", m.StoreScan(&cairnpb.StoreScanRequest{Parent: pk([]string{"a"}), Depth: cairnpb.Depth_DEPTH_CHILDREN_ONLY}),
			[]string{"/a/-/", "/a/-/ab", "/a/-/b", "/a/b"}},
		{"storeScan a, range b", m.StoreScan(&cairnpb.StoreScanRequest{Parent: pk([]string{"a"}), Range: &cairnpb.KeyRange{HasPrefix: true, Prefix: "b"}}),
			[]string{"/a/b", "/a/b/-/c"}},
		{"storeScan all, depth 1", m.StoreScan(&cairnpb.StoreScanRequest{Depth: cairnpb.Depth_DEPTH_CHILDREN_ONLY}),
			[]string{"/a"}},
	} {
		if g := names(tc.got); !slices.Equal(g, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, g, tc.want)
		}
	}
	if n := m.MultiDelete(&cairnpb.MultiDeleteRequest{Parent: pk([]string{"a"}), Depth: cairnpb.Depth_DEPTH_PARENT_AND_CHILDREN}); n != 4 {
		t.Errorf("multiDelete deleted %d, want 4", n)
	}
	if g := names(m.All()); !slices.Equal(g, []string{"/a/-/b/c", "/a/b", "/a/b/-/c", "/c/-/a"}) {
		t.Errorf("after multiDelete: %q", g)
	}
}
