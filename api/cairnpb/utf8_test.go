package cairnpb_test

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestInvalidUTF8Unmarshals puts 0xFF (never valid in UTF-8) into every
// string field of every client-facing message, alone and inside a list or
// map, and checks that unmarshalling keeps the bytes as they are and that
// marshalling sends them back unchanged. Under proto3 both failed ("invalid
// UTF-8"), and grpc-go answered such a request INTERNAL before Cairn's
// handlers could say which field was wrong; the files now set
// features.utf8_validation = NONE and the server checks instead.
func TestInvalidUTF8Unmarshals(t *testing.T) {
	const bad = "a\xffb"
	n := 0
	for _, md := range messages() {
		for i := range md.Fields().Len() {
			fd := md.Fields().Get(i)
			var b []byte
			switch {
			case fd.IsMap():
				var entry []byte
				if fd.MapKey().Kind() == protoreflect.StringKind {
					entry = protowire.AppendTag(entry, 1, protowire.BytesType)
					entry = protowire.AppendString(entry, bad)
				}
				if fd.MapValue().Kind() == protoreflect.StringKind {
					entry = protowire.AppendTag(entry, 2, protowire.BytesType)
					entry = protowire.AppendString(entry, bad)
				}
				if entry == nil {
					continue
				}
				b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
				b = protowire.AppendBytes(b, entry)
			case fd.Kind() == protoreflect.StringKind:
				b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
				b = protowire.AppendString(b, bad)
			default:
				continue
			}
			n++
			m := newMessage(t, md)
			if err := proto.Unmarshal(b, m.Interface()); err != nil {
				t.Errorf("%s: unmarshal with invalid UTF-8: %v", fd.FullName(), err)
				continue
			}
			var got string
			switch {
			case fd.IsMap():
				m.Get(fd).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
					got = k.String() + "=" + v.String()
					return false
				})
				if want := bad + "=" + bad; fd.MapKey().Kind() == protoreflect.StringKind &&
					fd.MapValue().Kind() == protoreflect.StringKind && got != want {
					t.Errorf("%s: got %q, want %q", fd.FullName(), got, want)
				}
			case fd.IsList():
				if l := m.Get(fd).List(); l.Len() != 1 || l.Get(0).String() != bad {
					t.Errorf("%s: got %v, want [%q]", fd.FullName(), l, bad)
				}
			default:
				if got := m.Get(fd).String(); got != bad {
					t.Errorf("%s: got %q, want %q", fd.FullName(), got, bad)
				}
			}
			out, err := proto.MarshalOptions{Deterministic: true}.Marshal(m.Interface())
			if err != nil {
				t.Errorf("%s: marshal with invalid UTF-8: %v", fd.FullName(), err)
			} else if !bytes.Equal(out, b) {
				t.Errorf("%s: marshalled %x, want %x", fd.FullName(), out, b)
			}
		}
	}
	if n == 0 {
		t.Fatal("no string fields found")
	}
	t.Logf("%d string fields take invalid UTF-8", n)
}
