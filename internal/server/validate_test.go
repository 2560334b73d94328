package server_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn/api/cairnpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// rawCodec sends request bytes as they are and keeps the reply's bytes. It
// is named "proto" so the server decodes the bytes with its protobuf codec.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: marshal %T", v)
	}
	return *b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: unmarshal into %T", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// badUTF8 is a string with a byte (0xFF) that is never valid in UTF-8.
const badUTF8 = "a\xffb"

// stringFields lists the paths of the string fields reachable from md, e.g.
// "ops.put.key.major" (lists and oneof members are named like fields).
func stringFields(md protoreflect.MessageDescriptor, prefix string, depth int) []string {
	var out []string
	for i := range md.Fields().Len() {
		fd := md.Fields().Get(i)
		path := prefix + string(fd.Name())
		switch {
		case fd.IsMap():
			if fd.MapKey().Kind() == protoreflect.StringKind || fd.MapValue().Kind() == protoreflect.StringKind {
				out = append(out, path)
			}
		case fd.Kind() == protoreflect.StringKind:
			out = append(out, path)
		case fd.Kind() == protoreflect.MessageKind && depth < 8:
			out = append(out, stringFields(fd.Message(), path+".", depth+1)...)
		}
	}
	return out
}

// perRecord turns a PutMany reply's first record's error into the status a
// single Put of it gets, for the checks of TestInvalidUTF8OverWire.
func perRecord(t *testing.T, reply []byte) error {
	t.Helper()
	var resp cairnpb.PutManyResponse
	if err := proto.Unmarshal(reply, &resp); err != nil || len(resp.GetResults()) != 1 {
		t.Fatalf("PutMany reply %x: %v, %d results", reply, err, len(resp.GetResults()))
	}
	r := resp.GetResults()[0]
	if r.GetErrorCode() == 0 {
		return nil
	}
	st, err := status.New(codes.Code(r.GetErrorCode()), r.GetErrorMessage()).WithDetails(r.GetDetail())
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

// TestInvalidUTF8OverWire is guarantee E1 for invalid UTF-8: a request with
// invalid UTF-8 in any string field, sent as raw bytes to a real lite node,
// fails with INVALID_ARGUMENT and an ErrorDetail (invalid_key for key
// material, invalid_argument otherwise; action FIX_INPUT) whose message
// names the field. Nothing is written or deleted, and the node keeps
// serving. The cases must cover every string field of every KV request, so
// a new string field without a check fails here.
func TestInvalidUTF8OverWire(t *testing.T) {
	n := startLite(t, t.TempDir())
	defer n.close()
	ctx := context.Background()

	// Records the bad requests must leave alone: a bad multi-delete under
	// "good" would remove them, a bad put would overwrite good/-/x.
	good := []*cairnpb.Key{
		{Major: []string{"good"}, Minor: []string{"x"}},
		{Major: []string{"good"}, Minor: []string{"y"}},
		{Major: []string{"good", "sub"}},
	}
	for _, k := range good {
		if _, err := n.kv.Put(ctx, &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: k, Value: []byte("before")}}); err != nil {
			t.Fatal(err)
		}
	}

	bad := badUTF8
	okKey := func() *cairnpb.Key { return &cairnpb.Key{Major: []string{"good"}, Minor: []string{"x"}} }
	badMajor := func() *cairnpb.Key { return &cairnpb.Key{Major: []string{"good", bad}, Minor: []string{"x"}} }
	badMinor := func() *cairnpb.Key { return &cairnpb.Key{Major: []string{"good"}, Minor: []string{"x", bad}} }
	badHeader := func() *cairnpb.RequestHeader { return &cairnpb.RequestHeader{Store: bad} }
	parent := func() *cairnpb.Key { return &cairnpb.Key{Major: []string{"good"}} }
	put := func(k *cairnpb.Key) *cairnpb.PutOp { return &cairnpb.PutOp{Key: k, Value: []byte("after")} }
	del := func(k *cairnpb.Key) *cairnpb.DeleteOp { return &cairnpb.DeleteOp{Key: k} }
	execute := func(h *cairnpb.RequestHeader, second *cairnpb.Operation) *cairnpb.ExecuteRequest {
		return &cairnpb.ExecuteRequest{Header: h, Ops: []*cairnpb.Operation{
			{Op: &cairnpb.Operation_Put{Put: put(&cairnpb.Key{Major: []string{"good"}, Minor: []string{"z"}})}}, second,
		}}
	}
	putOp := func(k *cairnpb.Key) *cairnpb.Operation {
		return &cairnpb.Operation{Op: &cairnpb.Operation_Put{Put: put(k)}}
	}
	delOp := func(k *cairnpb.Key) *cairnpb.Operation {
		return &cairnpb.Operation{Op: &cairnpb.Operation_Delete{Delete: del(k)}}
	}
	ranges := []struct {
		field string
		r     *cairnpb.KeyRange
	}{
		{"range.start", &cairnpb.KeyRange{HasStart: true, Start: bad}},
		{"range.end", &cairnpb.KeyRange{HasEnd: true, End: bad}},
		{"range.prefix", &cairnpb.KeyRange{HasPrefix: true, Prefix: bad}},
	}

	type tc struct {
		method string // KV method name
		field  string // the string field that holds invalid UTF-8, as stringFields names it
		req    proto.Message
		kind   string   // ErrorDetail kind
		says   []string // substrings of the status message
	}
	tests := []tc{
		{"Get", "key.major", &cairnpb.GetRequest{Key: badMajor()}, "invalid_key", []string{"key: ", "major component 1 is not valid UTF-8"}},
		{"Get", "key.minor", &cairnpb.GetRequest{Key: badMinor()}, "invalid_key", []string{"key: ", "minor component 1 is not valid UTF-8"}},
		{"Get", "header.store", &cairnpb.GetRequest{Header: badHeader(), Key: okKey()}, "invalid_argument", []string{"header.store is not valid UTF-8"}},
		{"Put", "op.key.major", &cairnpb.PutRequest{Op: put(badMajor())}, "invalid_key", []string{"put.key: ", "major component 1"}},
		{"Put", "op.key.minor", &cairnpb.PutRequest{Op: put(badMinor())}, "invalid_key", []string{"put.key: ", "minor component 1"}},
		{"Put", "header.store", &cairnpb.PutRequest{Header: badHeader(), Op: put(okKey())}, "invalid_argument", []string{"header.store"}},
		{"Delete", "op.key.major", &cairnpb.DeleteRequest{Op: del(badMajor())}, "invalid_key", []string{"delete.key: ", "major component 1"}},
		{"Delete", "op.key.minor", &cairnpb.DeleteRequest{Op: del(badMinor())}, "invalid_key", []string{"delete.key: ", "minor component 1"}},
		{"Delete", "header.store", &cairnpb.DeleteRequest{Header: badHeader(), Op: del(okKey())}, "invalid_argument", []string{"header.store"}},
		{"Execute", "ops.put.key.major", execute(nil, putOp(badMajor())), "invalid_key", []string{"operation 1: put.key: ", "major component 1"}},
		{"Execute", "ops.put.key.minor", execute(nil, putOp(badMinor())), "invalid_key", []string{"operation 1: put.key: ", "minor component 1"}},
		{"Execute", "ops.delete.key.major", execute(nil, delOp(badMajor())), "invalid_key", []string{"operation 1: delete.key: ", "major component 1"}},
		{"Execute", "ops.delete.key.minor", execute(nil, delOp(badMinor())), "invalid_key", []string{"operation 1: delete.key: ", "minor component 1"}},
		{"Execute", "header.store", execute(badHeader(), delOp(okKey())), "invalid_argument", []string{"header.store"}},
		{"MultiGet", "parent.major", &cairnpb.MultiGetRequest{Parent: badMajor()}, "invalid_key", []string{"parent: ", "major component 1"}},
		{"MultiGet", "parent.minor", &cairnpb.MultiGetRequest{Parent: badMinor()}, "invalid_key", []string{"parent: ", "minor component 1"}},
		{"MultiGet", "header.store", &cairnpb.MultiGetRequest{Header: badHeader(), Parent: parent()}, "invalid_argument", []string{"header.store"}},
		{"MultiDelete", "parent.major", &cairnpb.MultiDeleteRequest{Parent: badMajor()}, "invalid_key", []string{"parent: ", "major component 1"}},
		{"MultiDelete", "parent.minor", &cairnpb.MultiDeleteRequest{Parent: badMinor()}, "invalid_key", []string{"parent: ", "minor component 1"}},
		{"MultiDelete", "header.store", &cairnpb.MultiDeleteRequest{Header: badHeader(), Parent: parent()}, "invalid_argument", []string{"header.store"}},
		{"StoreScan", "parent.major", &cairnpb.StoreScanRequest{Parent: &cairnpb.Key{Major: []string{"good", bad}}}, "invalid_key", []string{"parent: ", "major component 1"}},
		// A store scan's parent has no minor path; UTF-8 is checked first.
		{"StoreScan", "parent.minor", &cairnpb.StoreScanRequest{Parent: badMinor()}, "invalid_key", []string{"parent: ", "minor component 1"}},
		{"StoreScan", "header.store", &cairnpb.StoreScanRequest{Header: badHeader()}, "invalid_argument", []string{"header.store"}},
		// PutMany answers a bad record in its result (perRecord below).
		{"PutMany", "ops.key.major", &cairnpb.PutManyRequest{Ops: []*cairnpb.PutOp{put(badMajor())}}, "invalid_key", []string{"put.key: ", "major component 1"}},
		{"PutMany", "ops.key.minor", &cairnpb.PutManyRequest{Ops: []*cairnpb.PutOp{put(badMinor())}}, "invalid_key", []string{"put.key: ", "minor component 1"}},
		{"PutMany", "header.store", &cairnpb.PutManyRequest{Header: badHeader(), Ops: []*cairnpb.PutOp{put(okKey())}}, "invalid_argument", []string{"header.store"}},
	}
	for _, rc := range ranges {
		// The whole "good" partition is the parent: a multi-delete that
		// ignored the range would delete every good record.
		field, r := rc.field, rc.r
		tests = append(tests,
			tc{"MultiGet", field, &cairnpb.MultiGetRequest{Parent: parent(), Range: r}, "invalid_key", []string{field[len("range."):] + " is not valid UTF-8"}},
			tc{"MultiDelete", field, &cairnpb.MultiDeleteRequest{Parent: parent(), Range: r}, "invalid_key", []string{field[len("range."):] + " is not valid UTF-8"}},
			tc{"StoreScan", field, &cairnpb.StoreScanRequest{Parent: parent(), Range: r}, "invalid_key", []string{field[len("range."):] + " is not valid UTF-8"}},
		)
	}

	// The cases cover every string field of every KV request.
	covered := map[string]bool{}
	for _, tc := range tests {
		covered[tc.method+" "+tc.field] = true
	}
	kv := cairnpb.File_api_cairnpb_kv_proto.Services().ByName("KV")
	for i := range kv.Methods().Len() {
		m := kv.Methods().Get(i)
		for _, f := range stringFields(m.Input(), "", 0) {
			if !covered[string(m.Name())+" "+f] {
				t.Errorf("no case sends invalid UTF-8 in %s %s.%s", m.Name(), m.Input().Name(), f)
			}
		}
	}

	for _, tc := range tests {
		t.Run(tc.method+"/"+tc.field, func(t *testing.T) {
			raw, err := proto.Marshal(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(raw, []byte(badUTF8)) {
				t.Fatalf("request bytes %x do not carry %q", raw, badUTF8)
			}
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var reply []byte
			err = n.conn.Invoke(rctx, "/cairn.v1.KV/"+tc.method, &raw, &reply, grpc.ForceCodec(rawCodec{}))
			if err == nil && tc.method == "PutMany" {
				err = perRecord(t, reply)
			}
			if err := checkStatus(err, codes.InvalidArgument, tc.kind); err != nil {
				t.Fatal(err)
			}
			st := status.Convert(err)
			for _, d := range st.Details() {
				if ed, ok := d.(*cairnpb.ErrorDetail); ok && ed.GetAction() != cairnpb.ErrorDetail_ACTION_FIX_INPUT {
					t.Errorf("action %v, want FIX_INPUT", ed.GetAction())
				}
			}
			for _, s := range tc.says {
				if !strings.Contains(st.Message(), s) {
					t.Errorf("message %q does not say %q", st.Message(), s)
				}
			}
			if !utf8.ValidString(st.Message()) {
				t.Errorf("message %q is not valid UTF-8", st.Message())
			}
			t.Logf("%v: %s", st.Code(), st.Message())
		})
	}

	// Nothing was written or deleted: the store holds exactly the good
	// records, unchanged.
	scan, err := n.kv.StoreScan(ctx, &cairnpb.StoreScanRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range scan.GetRecords() {
		got = append(got, fmt.Sprintf("%v/%v=%s", r.GetKey().GetMajor(), r.GetKey().GetMinor(), r.GetValue()))
	}
	var want []string
	for _, k := range good {
		want = append(want, fmt.Sprintf("%v/%v=before", k.GetMajor(), k.GetMinor()))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after the bad requests the store holds %q, want %q", got, want)
	}

	// The node still serves: a valid put, then a get of it.
	k := &cairnpb.Key{Major: []string{"after"}, Minor: []string{"é"}}
	if _, err := n.kv.Put(ctx, &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: k, Value: []byte("v")}}); err != nil {
		t.Fatalf("put after the bad requests: %v", err)
	}
	rec, err := n.kv.Get(ctx, &cairnpb.GetRequest{Key: k})
	if err != nil || string(rec.GetRecord().GetValue()) != "v" {
		t.Fatalf("get after the bad requests: %v, %v", rec, err)
	}
}
