package keys

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

var depths = []Depth{ChildrenOnly, ParentAndChildren, DescendantsOnly, ParentAndDescendants}

// TestMatchDepth checks each depth against each relation of path to parent,
// with no range. want is indexed like depths.
func TestMatchDepth(t *testing.T) {
	p := func(s ...string) []string { return s }
	for _, tc := range []struct {
		name         string
		parent, path []string
		want         [4]bool
	}{
		{"parent itself", p("a"), p("a"), [4]bool{false, true, false, true}},
		{"child", p("a"), p("a", "b"), [4]bool{true, true, true, true}},
		{"grandchild", p("a"), p("a", "b", "c"), [4]bool{false, false, true, true}},
		{"great-grandchild", p("a"), p("a", "b", "c", "d"), [4]bool{false, false, true, true}},
		{"non-descendant", p("a"), p("b", "c"), [4]bool{false, false, false, false}},
		{"ancestor", p("a", "b"), p("a"), [4]bool{false, false, false, false}},
		{"sibling", p("a", "b"), p("a", "c"), [4]bool{false, false, false, false}},
		{"sibling-prefix", p("a"), p("ab"), [4]bool{false, false, false, false}},
		{"child of sibling-prefix", p("a"), p("ab", "c"), [4]bool{false, false, false, false}},
		{"parent is a prefix of the component", p("a", "b"), p("a", "bc", "d"), [4]bool{false, false, false, false}},
		{"empty-component child", p("a"), p("a", ""), [4]bool{true, true, true, true}},
		{"empty parent, child", nil, p("a"), [4]bool{true, true, true, true}},
		{"empty parent, grandchild", nil, p("a", "b"), [4]bool{false, false, true, true}},
		{"deep parent itself", p("a", "b", "c"), p("a", "b", "c"), [4]bool{false, true, false, true}},
		{"deep child", p("a", "b", "c"), p("a", "b", "c", "d"), [4]bool{true, true, true, true}},
	} {
		for i, d := range depths {
			if got := Match(tc.parent, tc.path, nil, d); got != tc.want[i] {
				t.Errorf("%s: Match(%q, %q, nil, %v) = %v, want %v", tc.name, tc.parent, tc.path, d, got, tc.want[i])
			}
			if got := Match(tc.parent, tc.path, &Range{}, d); got != tc.want[i] {
				t.Errorf("%s: Match(%q, %q, &Range{}, %v) = %v, want %v", tc.name, tc.parent, tc.path, d, got, tc.want[i])
			}
		}
	}
}

// TestMatchRange checks that the range applies to the component right after
// the parent, at every depth, and never excludes the parent itself.
func TestMatchRange(t *testing.T) {
	r := &Range{Start: "b", HasStart: true, StartInclusive: true, End: "c", HasEnd: true}
	for _, tc := range []struct {
		path []string
		want [4]bool
	}{
		{[]string{"p"}, [4]bool{false, true, false, true}},
		{[]string{"p", "b"}, [4]bool{true, true, true, true}},
		{[]string{"p", "bz"}, [4]bool{true, true, true, true}},
		{[]string{"p", "a"}, [4]bool{false, false, false, false}},
		{[]string{"p", "c"}, [4]bool{false, false, false, false}},
		{[]string{"p", "b", "z"}, [4]bool{false, false, true, true}},
		{[]string{"p", "z", "b"}, [4]bool{false, false, false, false}},
	} {
		for i, d := range depths {
			if got := Match([]string{"p"}, tc.path, r, d); got != tc.want[i] {
				t.Errorf("Match([p], %q, [b, c), %v) = %v, want %v", tc.path, d, got, tc.want[i])
			}
		}
	}
}

func TestRangeContains(t *testing.T) {
	between := func(start string, si bool, end string, ei bool) *Range {
		return &Range{Start: start, HasStart: true, StartInclusive: si, End: end, HasEnd: true, EndInclusive: ei}
	}
	for _, tc := range []struct {
		name string
		r    *Range
		in   []string
		out  []string
	}{
		{"nil", nil, []string{"", "a", "\xff"}, nil},
		{"zero", &Range{}, []string{"", "a", "\xff"}, nil},
		{"[b, d]", between("b", true, "d", true), []string{"b", "b\x00", "c", "d"}, []string{"", "a", "az", "d\x00", "da", "e"}},
		{"(b, d)", between("b", false, "d", false), []string{"b\x00", "ba", "c", "cz"}, []string{"a", "b", "d", "da"}},
		{"[b, d)", between("b", true, "d", false), []string{"b", "c"}, []string{"a", "d"}},
		{"(b, d]", between("b", false, "d", true), []string{"c", "d"}, []string{"b", "d\x00"}},
		{"[b, b]", between("b", true, "b", true), []string{"b"}, []string{"a", "ba", "c"}},
		{"start only, inclusive", &Range{Start: "b", HasStart: true, StartInclusive: true}, []string{"b", "c", "\xff"}, []string{"", "a", "az"}},
		{"start only, exclusive", &Range{Start: "b", HasStart: true}, []string{"b\x00", "c"}, []string{"a", "b"}},
		{"end only, inclusive", &Range{End: "b", HasEnd: true, EndInclusive: true}, []string{"", "a", "b"}, []string{"b\x00", "c"}},
		{"end only, exclusive", &Range{End: "b", HasEnd: true}, []string{"", "a", "az"}, []string{"b", "c"}},
		{"empty start, inclusive", &Range{HasStart: true, StartInclusive: true}, []string{"", "a"}, nil},
		{"empty start, exclusive", &Range{HasStart: true}, []string{"a", "\x00"}, []string{""}},
		{"prefix", &Range{Prefix: "ab", HasPrefix: true}, []string{"ab", "abc", "ab\x00"}, []string{"", "a", "aa", "ac", "b", "xab"}},
		{"empty prefix", &Range{HasPrefix: true}, []string{"", "a"}, nil},
	} {
		for _, c := range tc.in {
			if !tc.r.Contains(c) {
				t.Errorf("%s: Contains(%q) = false, want true", tc.name, c)
			}
		}
		for _, c := range tc.out {
			if tc.r.Contains(c) {
				t.Errorf("%s: Contains(%q) = true, want false", tc.name, c)
			}
		}
		if err := tc.r.Validate(); err != nil {
			t.Errorf("%s: Validate() = %v", tc.name, err)
		}
		if full := tc.name == "nil" || tc.name == "zero"; tc.r.IsFull() != full {
			t.Errorf("%s: IsFull() = %v, want %v", tc.name, !full, full)
		}
	}
}

func TestRangeValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Range
		msg  string
	}{
		{"prefix and start", Range{Prefix: "a", HasPrefix: true, Start: "a", HasStart: true}, "prefix"},
		{"prefix and end", Range{Prefix: "a", HasPrefix: true, End: "b", HasEnd: true}, "prefix"},
		{"start after end", Range{Start: "b", HasStart: true, End: "a", HasEnd: true}, `"b"`},
		{"start after end, inclusive", Range{Start: "b", HasStart: true, StartInclusive: true, End: "a", HasEnd: true, EndInclusive: true}, "after"},
		{"start extends end", Range{Start: "ab", HasStart: true, End: "a", HasEnd: true}, "after"},
		{"start not UTF-8", Range{Start: "a\xff", HasStart: true}, `start is not valid UTF-8 ("a\xff")`},
		{"end not UTF-8", Range{End: "\xc3", HasEnd: true}, "end is not valid UTF-8"},
		{"prefix not UTF-8", Range{Prefix: "\xed\xa0\x80", HasPrefix: true}, "prefix is not valid UTF-8"},
		// Unset strings still travel on the wire, so they count here.
		{"unset start not UTF-8", Range{Start: "\xff"}, "start is not valid UTF-8"},
	} {
		err := tc.r.Validate()
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate() = %v, want ErrInvalid", tc.name, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: Validate() = %q, want it to mention %q", tc.name, err, tc.msg)
		}
	}
	// Bounds that are unset do not count, whatever their values.
	for _, r := range []Range{
		{Start: "b", End: "a"},
		{Start: "b", HasStart: true, End: "a"},
		{Prefix: "a", HasPrefix: true, Start: "x", End: "y"},
		{Start: "a", HasStart: true, End: "a", HasEnd: true, StartInclusive: true, EndInclusive: true},
	} {
		if err := r.Validate(); err != nil {
			t.Errorf("%+v.Validate() = %v, want nil", r, err)
		}
	}
}

func TestDepth(t *testing.T) {
	want := []string{"CHILDREN_ONLY", "PARENT_AND_CHILDREN", "DESCENDANTS_ONLY", "PARENT_AND_DESCENDANTS"}
	for i, d := range depths {
		if int(d) != i+1 || !d.Valid() || d.String() != want[i] {
			t.Errorf("depth %d: value %d, Valid %v, String %q; want %d, true, %q", i, int(d), d.Valid(), d, i+1, want[i])
		}
	}
	for _, d := range []Depth{0, -1, 5} {
		if d.Valid() {
			t.Errorf("Depth(%d).Valid() = true", int(d))
		}
		if got, want := d.String(), "Depth("+strconv.Itoa(int(d))+")"; got != want {
			t.Errorf("Depth(%d).String() = %q, want %q", int(d), got, want)
		}
	}
}
