package keys

import (
	"errors"
	"slices"
	"testing"
	"unicode/utf8"
)

// canonical lists keys whose string form Parse accepts and String reprints
// byte for byte.
var canonical = []struct {
	s string
	k Key
}{
	{"/a", New([]string{"a"})},
	{"/a", Key{Major: []string{"a"}, Minor: []string{}}},
	{"/a/b", New([]string{"a", "b"})},
	{"/a/-/b", New([]string{"a"}, "b")},
	{"/a/-/b/c", New([]string{"a"}, "b", "c")},
	{"/a/b/-/c/d", New([]string{"a", "b"}, "c", "d")},
	{"/a%2Fb", New([]string{"a/b"})},
	{"/%2F", New([]string{"/"})},
	{"/100%25", New([]string{"100%"})},
	{"/%252F", New([]string{"%2F"})},
	{"/%2D", New([]string{"-"})},
	{"/a/-/%2D", New([]string{"a"}, "-")},
	{"/--", New([]string{"--"})},
	{"/-a/a-", New([]string{"-a", "a-"})},
	{"/%00%01%1F%7F", New([]string{"\x00\x01\x1f\x7f"})},
	{"/a%0Ab%09", New([]string{"a\nb\t"})},
	{"/ ~", New([]string{" ~"})},
	{"/héllo/-/日本", New([]string{"héllo"}, "日本")},
}

func TestStringParseCanonical(t *testing.T) {
	for _, tc := range canonical {
		if got := tc.k.String(); got != tc.s {
			t.Errorf("%#v.String() = %q, want %q", tc.k, got, tc.s)
		}
		k, err := Parse(tc.s)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.s, err)
			continue
		}
		if !k.Equal(tc.k) {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.s, k, tc.k)
		}
		if got := k.String(); got != tc.s {
			t.Errorf("Parse(%q).String() = %q", tc.s, got)
		}
	}
}

// TestParseNonCanonical covers inputs that parse to a key whose canonical
// form differs from the input.
func TestParseNonCanonical(t *testing.T) {
	for _, tc := range []struct {
		in, canon string
		k         Key
	}{
		{"/a/-", "/a", New([]string{"a"})},
		{"/a/b/-", "/a/b", New([]string{"a", "b"})},
		{"/%61", "/a", New([]string{"a"})},
		{"/%2f", "/%2F", New([]string{"/"})},
		{"/%2d", "/%2D", New([]string{"-"})},
		{"/%2D%2D", "/--", New([]string{"--"})},
		{"/%c3%a9", "/é", New([]string{"é"})},
	} {
		k, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !k.Equal(tc.k) {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.in, k, tc.k)
		}
		if got := k.String(); got != tc.canon {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.canon)
		}
	}
}

// TestStringParseRoundTrip checks Parse(k.String()) == k for keys holding
// every byte that String must escape.
func TestStringParseRoundTrip(t *testing.T) {
	var all []byte
	for b := 0; b < 0x80; b++ {
		all = append(all, byte(b))
	}
	for _, k := range []Key{
		New([]string{string(all)}, string(all)),
		New([]string{"-"}, "-", "-"),
		New([]string{"%", "-", "/"}, "%", "/"),
		New([]string{"%2D", "%%", "//"}),
		New([]string{"a"}, []string{}...),
	} {
		s := k.String()
		got, err := Parse(s)
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		if !got.Equal(k) {
			t.Errorf("Parse(%q) = %#v, want %#v", s, got, k)
		}
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] == 0x7F {
				t.Errorf("%q has unescaped byte %#x", s, s[i])
			}
		}
	}
}

// TestStringInvalidUTF8 checks that a key with bytes that are not UTF-8
// prints as valid UTF-8, those bytes escaped and valid runes kept, and that
// Parse refuses the printed form as it refuses the key.
func TestStringInvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		k    Key
		want string
	}{
		{New([]string{"a\xffb"}), "/a%FFb"},
		{New([]string{"é\xc3"}, "\xed\xa0\x80", "日本"), "/é%C3/-/%ED%A0%80/日本"},
		{New([]string{"\xe6\x97"}), "/%E6%97"}, // a truncated 日
		{New([]string{"\ufffd"}), "/\ufffd"},   // U+FFFD itself is valid
	} {
		got := tc.k.String()
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("%#v.String() = %q, want %q", tc.k, got, tc.want)
		}
		if tc.k.CheckUTF8() == nil {
			continue
		}
		if k, err := Parse(got); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %#v, %v; want ErrMalformed", got, k, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{
		"",
		"a",
		"a/b",
		" /a",
		"-",
		"/-",
		"/-/x",
		"/a/-/b/-/c",
		"/a/-/-",
		"/a/-/b/-",
		"/%",
		"/a%",
		"/a%2",
		"/a%2/b",
		"/%zz",
		"/%g0",
		"/%0g",
		"/%-1",
		"/\xff",
		"/a/-/\xc3",
		"/%FF",
		"/%C3",
		"/%C3%28",
		"/%ED%A0%80", // a UTF-16 surrogate
		"/",          // the root: a scan parent, never a record
		"//",
		"/a//b",
		"/a/",
		"/a/-/",
		"/a/-/b/",
		"//-/",
	} {
		k, err := Parse(s)
		if err == nil {
			t.Errorf("Parse(%q) = %#v, want an error", s, k)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) error %v does not wrap ErrMalformed", s, err)
		}
	}
}

func TestParsePrefix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Key
	}{
		{"", Key{}},
		{"/", Key{}},
		{"/a", New([]string{"a"})},
		{"/a/-/b", New([]string{"a"}, "b")},
	} {
		k, err := ParsePrefix(tc.in)
		if err != nil {
			t.Errorf("ParsePrefix(%q): %v", tc.in, err)
			continue
		}
		if !k.Equal(tc.want) {
			t.Errorf("ParsePrefix(%q) = %#v, want %#v", tc.in, k, tc.want)
		}
	}
	if _, err := ParsePrefix("a"); !errors.Is(err, ErrMalformed) {
		t.Errorf("ParsePrefix(\"a\") error = %v, want ErrMalformed", err)
	}
}

func TestEqualAndPath(t *testing.T) {
	a := New([]string{"a", "b"}, "c")
	if !a.Equal(New([]string{"a", "b"}, "c")) {
		t.Error("equal keys compare unequal")
	}
	if a.Equal(New([]string{"a"}, "b", "c")) {
		t.Error("keys with the same path but a different major/minor split compare equal")
	}
	if !New([]string{"a"}).Equal(Key{Major: []string{"a"}, Minor: []string{}}) {
		t.Error("nil and empty minor paths compare unequal")
	}
	if got, want := a.Path(), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("Path() = %q, want %q", got, want)
	}
	major := make([]string, 1, 4)
	major[0] = "m"
	k := New(major, "x")
	_ = k.Path()
	if got := major[:2]; got[1] != "" {
		t.Errorf("Path() wrote into the caller's major slice: %q", got)
	}
}
