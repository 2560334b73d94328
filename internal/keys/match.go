package keys

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Depth chooses which records under a parent an operation touches.
type Depth int

// The depths, numbered as on the wire.
const (
	ChildrenOnly         Depth = 1
	ParentAndChildren    Depth = 2
	DescendantsOnly      Depth = 3
	ParentAndDescendants Depth = 4
)

func (d Depth) String() string {
	switch d {
	case ChildrenOnly:
		return "CHILDREN_ONLY"
	case ParentAndChildren:
		return "PARENT_AND_CHILDREN"
	case DescendantsOnly:
		return "DESCENDANTS_ONLY"
	case ParentAndDescendants:
		return "PARENT_AND_DESCENDANTS"
	}
	return fmt.Sprintf("Depth(%d)", int(d))
}

// Valid reports whether d is one of the four depths.
func (d Depth) Valid() bool { return d >= ChildrenOnly && d <= ParentAndDescendants }

func (d Depth) includesParent() bool { return d == ParentAndChildren || d == ParentAndDescendants }
func (d Depth) includesDeep() bool   { return d == DescendantsOnly || d == ParentAndDescendants }

// Range restricts the path component right after a parent. The zero Range
// (or a nil *Range) matches every component. With HasPrefix it matches
// components that start with Prefix, and the bounds must be unset.
type Range struct {
	Start          string
	HasStart       bool
	StartInclusive bool
	End            string
	HasEnd         bool
	EndInclusive   bool
	Prefix         string
	HasPrefix      bool
}

// Validate reports a range whose start is after its end, that mixes a
// prefix with bounds, or whose start, end or prefix (set or not) is not
// valid UTF-8. The error wraps ErrInvalid.
func (r *Range) Validate() error {
	if r == nil {
		return nil
	}
	for _, f := range []struct{ name, v string }{{"start", r.Start}, {"end", r.End}, {"prefix", r.Prefix}} {
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%w: key range %s is not valid UTF-8 (%q)", ErrInvalid, f.name, f.v)
		}
	}
	if r.HasPrefix && (r.HasStart || r.HasEnd) {
		return fmt.Errorf("%w: a key range has either a prefix or start/end bounds, not both", ErrInvalid)
	}
	if r.HasStart && r.HasEnd && r.Start > r.End {
		return fmt.Errorf("%w: key range start %q is after its end %q", ErrInvalid, r.Start, r.End)
	}
	return nil
}

// Contains reports whether component c is inside the range.
func (r *Range) Contains(c string) bool {
	if r == nil {
		return true
	}
	if r.HasPrefix {
		return strings.HasPrefix(c, r.Prefix)
	}
	if r.HasStart {
		if c < r.Start || (c == r.Start && !r.StartInclusive) {
			return false
		}
	}
	if r.HasEnd {
		if c > r.End || (c == r.End && !r.EndInclusive) {
			return false
		}
	}
	return true
}

// IsFull reports whether the range matches every component.
func (r *Range) IsFull() bool { return r == nil || (!r.HasPrefix && !r.HasStart && !r.HasEnd) }

// Match reports whether path is selected by (parent, r, d): path must extend
// parent; the parent itself is selected when d includes it; a child or
// descendant is selected when d reaches it and r contains the component right
// after parent.
func Match(parent, path []string, r *Range, d Depth) bool {
	if len(path) < len(parent) {
		return false
	}
	for i, c := range parent {
		if path[i] != c {
			return false
		}
	}
	switch extra := len(path) - len(parent); {
	case extra == 0:
		return d.includesParent()
	case extra > 1 && !d.includesDeep():
		return false
	}
	return r.Contains(path[len(parent)])
}
