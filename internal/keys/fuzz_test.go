package keys

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	for _, tc := range canonical {
		f.Add(tc.s)
	}
	for _, s := range []string{"", "-", "/-", "/-/x", "/a/-", "/a/-/-", "/%", "/%2", "/%zz", "/%2d", "/%FF", "/\xff", "/a%2Fb/-/%2D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrMalformed", s, err)
			}
			return
		}
		if len(k.Major) == 0 {
			t.Fatalf("Parse(%q) = %#v, which has no major path", s, k)
		}
		printed := k.String()
		k2, err := Parse(printed)
		if err != nil {
			t.Fatalf("Parse(%q) = %#v, but Parse of its String %q: %v", s, k, printed, err)
		}
		if !k2.Equal(k) {
			t.Fatalf("Parse(%q) = %#v, Parse(%q) = %#v", s, k, printed, k2)
		}
		if again := k2.String(); again != printed {
			t.Fatalf("String is not stable: %q then %q", printed, again)
		}
		if err := DefaultLimits().CheckParent(k); errors.Is(err, ErrInvalid) {
			t.Fatalf("Parse(%q) = %#v, which CheckParent calls invalid: %v", s, k, err)
		}
	})
}

func FuzzDecode(f *testing.F) {
	for _, k := range []Key{
		New([]string{"a"}),
		New([]string{""}, ""),
		New([]string{"a", "b"}, "c", "d"),
		New([]string{"\x00"}, "\x00\xff", "\x00\x02"),
	} {
		f.Add(Encode(9, k))
	}
	hdr := string(hashPrefix(0, 0))
	for _, s := range []string{"", "r", hdr, hdr + "\x00\x02", hdr + "a\x00\x03", hdr + "a\x00\xff\x00", hdr + "a\x00\x01\x00\x02\x00\x02"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		k, err := Decode(in)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode(% x) error %v does not wrap ErrCorrupt", in, err)
			}
			return
		}
		if len(k.Major) == 0 {
			t.Fatalf("Decode(% x) = %#v, which has no major path", in, k)
		}
		enc := Encode(ShardOf(in), k)
		// The encoding is canonical: only the hash may differ from the input,
		// since Decode does not check it.
		if !bytes.Equal(enc[:9], in[:9]) || !bytes.Equal(enc[HeaderLen:], in[HeaderLen:]) {
			t.Fatalf("Decode(% x) = %#v, which encodes to % x", in, k, enc)
		}
		k2, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(%#v)): %v", k, err)
		}
		if !k2.Equal(k) {
			t.Fatalf("Decode(Encode(%#v)) = %#v", k, k2)
		}
		// Decoded components may hold any bytes; the printed key is still
		// valid UTF-8 (it goes into error messages), and Parse reads it
		s := k.String()
		if !utf8.ValidString(s) {
			t.Fatalf("%#v.String() = %q, which is not valid UTF-8", k, s)
		}
		// back exactly when every component is valid UTF-8 and non-empty.
		parseable := k.CheckUTF8() == nil && checkNonEmpty(k) == nil
		if k3, err := Parse(s); (err == nil) != parseable || (err == nil && !k3.Equal(k)) {
			t.Fatalf("Parse(%q) = %#v, %v; CheckUTF8: %v, checkNonEmpty: %v", s, k3, err, k.CheckUTF8(), checkNonEmpty(k))
		}
	})
}
