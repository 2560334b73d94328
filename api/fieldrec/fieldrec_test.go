package fieldrec

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	in := []Field{{"field0", []byte("a")}, {"field1", nil}, {"other", bytes.Repeat([]byte{0xff}, 300)}}
	b := Append(nil, in)
	out, err := Decode(b, []string{"field0", "field1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(out), fmt.Sprint(in); got != want {
		t.Fatalf("decoded %s, want %s", got, want)
	}
	if err := Check(b); err != nil {
		t.Fatalf("Check = %v", err)
	}
	// The drawn size of YCSB's default record: 1 + 1 + 10*(1+6+1+100).
	var f []Field
	for i := range 10 {
		f = append(f, Field{Name: fmt.Sprintf("field%d", i), Value: make([]byte, 100)})
	}
	if n := len(Append(nil, f)); n != 1082 {
		t.Errorf("default record encodes to %d bytes, want 1082", n)
	}
}

func TestRejects(t *testing.T) {
	good := Append(nil, []Field{{"f", []byte("v")}})
	for name, b := range map[string][]byte{
		"empty":       nil,
		"version":     append([]byte{0x02}, good[1:]...),
		"truncated":   good[:len(good)-1],
		"trailing":    append(good[:len(good):len(good)], 0),
		"huge count":  {Version, 0xff, 0xff, 0x03},
		"long length": {Version, 1, 50, 'x'},
		"non-minimal": {Version, 0x81, 0x00},
	} {
		if _, err := Decode(b, nil, nil); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode = %v, want ErrMalformed", name, err)
		}
		if err := Check(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Check = %v, want ErrMalformed", name, err)
		}
	}
	dup := Append(nil, []Field{{"a", nil}, {"b", nil}, {"a", []byte("x")}})
	if _, err := Decode(dup, nil, nil); err != nil {
		t.Errorf("Decode of a record with a repeated name = %v, want it decoded", err)
	}
	if err := Check(dup); !errors.Is(err, ErrMalformed) {
		t.Errorf("Check of a record with a repeated name = %v, want ErrMalformed", err)
	}
}

func TestMerge(t *testing.T) {
	stored := Append(nil, []Field{{"a", []byte("1")}, {"b", []byte("2")}, {"c", []byte("3")}})
	update := Append(nil, []Field{{"d", []byte("new")}, {"b", []byte("two")}, {"e", nil}})
	got, err := Merge(nil, stored, update)
	if err != nil {
		t.Fatal(err)
	}
	want := Append(nil, []Field{{"a", []byte("1")}, {"b", []byte("two")}, {"c", []byte("3")}, {"d", []byte("new")}, {"e", nil}})
	if !bytes.Equal(got, want) {
		t.Fatalf("Merge = %x, want %x", got, want)
	}
	if _, err := Merge(nil, []byte("plain bytes"), update); !errors.Is(err, ErrMalformed) {
		t.Errorf("Merge into a value that is no record = %v, want ErrMalformed", err)
	}
	if _, err := Merge(nil, stored, []byte{Version}); !errors.Is(err, ErrMalformed) {
		t.Errorf("Merge of an update that is no record = %v, want ErrMalformed", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Append(nil, []Field{{"field0", []byte("value")}, {"field1", nil}}))
	f.Add([]byte{Version, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		fields, err := Decode(b, []string{"field0"}, nil)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to the same bytes.
		if again := Append(nil, fields); !bytes.Equal(again, b) {
			t.Fatalf("decode then encode changed %x into %x", b, again)
		}
		// Merging a record into itself changes nothing when its names are unique.
		if Check(b) == nil {
			m, err := Merge(nil, b, b)
			if err != nil || !bytes.Equal(m, b) {
				t.Fatalf("Merge(b, b) = %x, %v; want %x", m, err, b)
			}
		}
	})
}

// mergeRef is Merge written the plain way, as it first was: decode both,
// replace by name, append the rest, encode.
func mergeRef(stored, update []byte) ([]byte, error) {
	upd, err := Decode(update, nil, nil)
	if err != nil {
		return nil, err
	}
	old, err := Decode(stored, nil, nil)
	if err != nil {
		return nil, err
	}
	used := make([]bool, len(upd))
	for j, f := range old {
		for i, u := range upd {
			if u.Name == f.Name {
				old[j].Value, used[i] = u.Value, true
				break
			}
		}
	}
	for i, u := range upd {
		if !used[i] {
			old = append(old, u)
		}
	}
	return Append(nil, old), nil
}

// FuzzMerge: Merge writes what mergeRef does, after whatever dst held, and
// fails exactly where it fails.
func FuzzMerge(f *testing.F) {
	rec := func(fs ...Field) []byte { return Append(nil, fs) }
	f.Add(rec(Field{"a", []byte("1")}, Field{"b", []byte("2")}), rec(Field{"b", []byte("two")}, Field{"c", nil}), []byte("x"))
	f.Add(rec(Field{"a", []byte("1")}, Field{"a", []byte("2")}), rec(Field{"a", []byte("3")}, Field{"a", []byte("4")}), []byte{})
	f.Add([]byte{Version, 0}, rec(Field{strings.Repeat("n", 200), bytes.Repeat([]byte("v"), 300)}), []byte{})
	many := make([]Field, 20)
	for i := range many {
		many[i] = Field{strconv.Itoa(i), []byte{byte(i)}}
	}
	f.Add(rec(many[:5]...), rec(many...), []byte{})
	f.Fuzz(func(t *testing.T, stored, update, dst []byte) {
		want, wantErr := mergeRef(stored, update)
		got, err := Merge(slices.Clone(dst), stored, update)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Merge error %v, the plain merge's %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, append(slices.Clone(dst), want...)) {
			t.Fatalf("Merge = %x, want %x after %x", got, want, dst)
		}
	})
}

func BenchmarkMerge(b *testing.B) {
	fields := make([]Field, 10)
	for i := range fields {
		fields[i] = Field{"field" + strconv.Itoa(i), bytes.Repeat([]byte{'v'}, 100)}
	}
	stored := Append(nil, fields)
	update := Append(nil, []Field{{"field3", bytes.Repeat([]byte{'u'}, 100)}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Merge(nil, stored, update); err != nil {
			b.Fatal(err)
		}
	}
}
