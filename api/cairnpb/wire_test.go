package cairnpb_test

// The wire contract is frozen: these tests pin the bytes every message
// marshals to and the shape of every field, so a change of .proto syntax,
// protoc or plugin that changed the wire format (or what a field means to an
// older peer) fails here. testdata/wire.golden and testdata/shape.golden were
// written by the proto3 code before kv.proto and admin.proto moved to
// edition 2023; they must stay byte-for-byte the same.
//
// Regenerate them (only for a deliberate, compatible change of the
// contract, such as a new field) with:
//
//	go test ./api/cairnpb/ -run 'TestWire(Golden|Shape)' -update

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// files are the client-facing wire contract.
var files = []protoreflect.FileDescriptor{cairnpb.File_api_cairnpb_kv_proto, cairnpb.File_api_cairnpb_admin_proto}

// messages returns every message of files, nested ones included, except
// synthetic map entries, in declaration order.
func messages() []protoreflect.MessageDescriptor {
	var out []protoreflect.MessageDescriptor
	var walk func(protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			m := ms.Get(i)
			if m.IsMapEntry() {
				continue
			}
			out = append(out, m)
			walk(m.Messages())
		}
	}
	for _, f := range files {
		walk(f.Messages())
	}
	return out
}

// newMessage returns an empty message of the generated Go type for md.
func newMessage(t testing.TB, md protoreflect.MessageDescriptor) protoreflect.Message {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		t.Fatalf("%s has no generated Go type: %v", md.FullName(), err)
	}
	return mt.New()
}

// variants is how many filled forms a message has: one per member of its
// largest oneof, so every oneof member is marshalled once.
func variants(md protoreflect.MessageDescriptor) int {
	n := 1
	for i := range md.Oneofs().Len() {
		n = max(n, md.Oneofs().Get(i).Fields().Len())
	}
	return n
}

// fill sets every field of m (for a oneof, member variant mod its size) to a
// value derived from the field: negative and multi-byte varints, non-ASCII
// strings, bytes with 0x00 and 0xFF, two elements per list and map.
func fill(m protoreflect.Message, variant, depth int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && od.Fields().Get(variant%od.Fields().Len()) != fd {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for j := range 2 {
				v := mp.NewValue()
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					fill(v.Message(), variant, depth+1)
				} else {
					v = scalar(fd.MapValue(), j)
				}
				mp.Set(scalar(fd.MapKey(), j).MapKey(), v)
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for j := range 2 {
				if fd.Kind() == protoreflect.MessageKind {
					v := l.NewElement()
					fill(v.Message(), variant, depth+1)
					l.Append(v)
				} else {
					l.Append(scalar(fd, j))
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			if depth < 4 {
				fill(m.Mutable(fd).Message(), variant, depth+1)
			}
		default:
			m.Set(fd, scalar(fd, 0))
		}
	}
}

func scalar(fd protoreflect.FieldDescriptor, j int) protoreflect.Value {
	n := int64(fd.Number())*1000 + int64(j)
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(j == 0)
	case protoreflect.EnumKind:
		vs := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vs.Get(1 + j%(vs.Len()-1)).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(-n))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(-n * 1_000_003)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(n))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(n) << 20)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(n) + 0.5)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(float64(n) + 0.25)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fmt.Sprintf("%s-%d-é", fd.Name(), j))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte{0, 0xFF, byte(n), byte(j)})
	}
	panic(fmt.Sprintf("scalar: unhandled kind %v of %s", fd.Kind(), fd.FullName()))
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("%s line %d:\n got %s\nwant %s", path, i+1, g, w)
		}
	}
}

// TestWireGolden marshals a filled form of every message (every oneof member
// once) and compares the bytes with the ones the proto3 code produced, then
// checks the bytes unmarshal back to the same message.
func TestWireGolden(t *testing.T) {
	var out bytes.Buffer
	for _, md := range messages() {
		for v := range variants(md) {
			m := newMessage(t, md)
			fill(m, v, 0)
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m.Interface())
			if err != nil {
				t.Fatalf("marshal %s: %v", md.FullName(), err)
			}
			fmt.Fprintf(&out, "%s/%d %s\n", md.FullName(), v, hex.EncodeToString(b))
			back := newMessage(t, md)
			if err := proto.Unmarshal(b, back.Interface()); err != nil {
				t.Fatalf("unmarshal %s: %v", md.FullName(), err)
			}
			if !proto.Equal(m.Interface(), back.Interface()) {
				t.Errorf("%s/%d does not survive a round trip", md.FullName(), v)
			}
			if len(back.GetUnknown()) > 0 {
				t.Errorf("%s/%d: unknown fields after a round trip: %x", md.FullName(), v, back.GetUnknown())
			}
		}
	}
	golden(t, "wire.golden", out.Bytes())
}

// TestWireShape pins what each field means on the wire and to a peer: number,
// kind, cardinality, presence, packing, open or closed enum, oneof, map, and
// JSON name. UTF-8 validation is left out on purpose: it is the one thing the
// move to edition 2023 changed (see TestInvalidUTF8Unmarshals).
func TestWireShape(t *testing.T) {
	var out bytes.Buffer
	for _, md := range messages() {
		fmt.Fprintf(&out, "message %s\n", md.FullName())
		for i := range md.Fields().Len() {
			fd := md.Fields().Get(i)
			fmt.Fprintf(&out, "  %d %s %v %v presence=%v packed=%v map=%v",
				fd.Number(), fd.Name(), fd.Cardinality(), fd.Kind(), fd.HasPresence(), fd.IsPacked(), fd.IsMap())
			if fd.Kind() == protoreflect.EnumKind {
				fmt.Fprintf(&out, " enum=%s closed=%v", fd.Enum().FullName(), fd.Enum().IsClosed())
			}
			if fd.Kind() == protoreflect.MessageKind {
				fmt.Fprintf(&out, " message=%s", fd.Message().FullName())
			}
			if od := fd.ContainingOneof(); od != nil {
				fmt.Fprintf(&out, " oneof=%s synthetic=%v", od.Name(), od.IsSynthetic())
			}
			fmt.Fprintf(&out, " json=%s\n", fd.JSONName())
		}
	}
	for _, f := range files {
		for i := range f.Services().Len() {
			sd := f.Services().Get(i)
			fmt.Fprintf(&out, "service %s\n", sd.FullName())
			for j := range sd.Methods().Len() {
				m := sd.Methods().Get(j)
				fmt.Fprintf(&out, "  %s(%s) %s\n", m.Name(), m.Input().FullName(), m.Output().FullName())
			}
		}
		for i := range f.Enums().Len() {
			writeEnum(&out, f.Enums().Get(i))
		}
	}
	for _, md := range messages() {
		for i := range md.Enums().Len() {
			writeEnum(&out, md.Enums().Get(i))
		}
	}
	golden(t, "shape.golden", out.Bytes())
}

func writeEnum(out *bytes.Buffer, ed protoreflect.EnumDescriptor) {
	fmt.Fprintf(out, "enum %s closed=%v\n", ed.FullName(), ed.IsClosed())
	for i := range ed.Values().Len() {
		v := ed.Values().Get(i)
		fmt.Fprintf(out, "  %s = %d\n", v.Name(), v.Number())
	}
}

// TestDynamicMatchesGenerated checks the generated Go types against the
// descriptors alone: a message built from the descriptor marshals to the
// same bytes as the generated one, so nothing in the Go code (field types,
// pointer scalars) changes the wire form.
func TestDynamicMatchesGenerated(t *testing.T) {
	for _, md := range messages() {
		for v := range variants(md) {
			gen := newMessage(t, md)
			fill(gen, v, 0)
			dyn := dynamicpb.NewMessage(md)
			fill(dyn, v, 0)
			opts := proto.MarshalOptions{Deterministic: true}
			gb, err1 := opts.Marshal(gen.Interface())
			db, err2 := opts.Marshal(dyn)
			if err1 != nil || err2 != nil || !bytes.Equal(gb, db) {
				t.Errorf("%s/%d: generated %x (%v), dynamic %x (%v)", md.FullName(), v, gb, err1, db, err2)
			}
		}
	}
}
