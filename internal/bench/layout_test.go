package bench

import (
	"bytes"
	"errors"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	in := []Field{{"field0", []byte("a")}, {"field1", nil}, {"other", bytes.Repeat([]byte{0xff}, 300)}}
	b := appendRecord(nil, in)
	out, err := decodeRecord(b, []string{"field0", "field1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("decoded %d fields, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i].Name != in[i].Name || !bytes.Equal(out[i].Value, in[i].Value) {
			t.Errorf("field %d: %q=%q, want %q=%q", i, out[i].Name, out[i].Value, in[i].Name, in[i].Value)
		}
	}
	// The drawn size of a default record: 1 + 1 + 10*(1+6+1+100).
	var f []Field
	for i := range 10 {
		f = append(f, Field{Name: "field" + string(rune('0'+i)), Value: make([]byte, 100)})
	}
	if n := len(appendRecord(nil, f)); n != 1082 {
		t.Errorf("default record encodes to %d bytes, want 1082", n)
	}
}

func TestRecordDecodeRejects(t *testing.T) {
	good := appendRecord(nil, []Field{{"f", []byte("v")}})
	for name, b := range map[string][]byte{
		"empty":       nil,
		"version":     append([]byte{0x02}, good[1:]...),
		"truncated":   good[:len(good)-1],
		"trailing":    append(good[:len(good):len(good)], 0),
		"huge count":  {layoutVersion, 0xff, 0xff, 0x03},
		"long length": {layoutVersion, 1, 50, 'x'},
	} {
		if _, err := decodeRecord(b, nil, nil); !errors.Is(err, errBadRecord) {
			t.Errorf("%s: decodeRecord = %v, want errBadRecord", name, err)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(appendRecord(nil, []Field{{"field0", []byte("value")}, {"field1", nil}}))
	f.Add([]byte{layoutVersion, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		fields, err := decodeRecord(b, []string{"field0"}, nil)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to the same bytes.
		if again := appendRecord(nil, fields); !bytes.Equal(again, b) {
			t.Fatalf("decode then encode changed %x into %x", b, again)
		}
	})
}
