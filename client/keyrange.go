package client

import (
	"fmt"

	"github.com/cairndb/cairn/api/cairnpb"
)

// Depth chooses which records under a parent key an operation touches. The
// zero value means ParentAndDescendants.
type Depth int

// The depths, numbered as on the wire.
const (
	ChildrenOnly         Depth = 1 // records one component below the parent
	ParentAndChildren    Depth = 2 // the parent and its children
	DescendantsOnly      Depth = 3 // every record below the parent
	ParentAndDescendants Depth = 4 // the parent and every record below it
)

func (d Depth) String() string {
	switch d {
	case 0:
		return "DEFAULT"
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

// Direction is the order in which MultiGetIterator returns records. The zero
// value means Forward.
type Direction int

// The directions, numbered as on the wire.
const (
	Forward Direction = 1 // ascending key order
	Reverse Direction = 2 // descending key order
)

func (d Direction) String() string {
	switch d {
	case 0:
		return "DEFAULT"
	case Forward:
		return "FORWARD"
	case Reverse:
		return "REVERSE"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// KeyRange restricts the path component right after the parent key of a
// multi-key operation. With HasPrefix it matches components that start with
// Prefix; otherwise Start and End bound it, each bound optional and
// inclusive or not. A nil *KeyRange matches every component. Build one with
// Between, From, To or Prefix.
type KeyRange struct {
	Start          string
	HasStart       bool
	StartInclusive bool
	End            string
	HasEnd         bool
	EndInclusive   bool
	Prefix         string
	HasPrefix      bool
}

// Between matches components from start to end, each bound inclusive or not.
func Between(start string, startInclusive bool, end string, endInclusive bool) *KeyRange {
	return &KeyRange{Start: start, HasStart: true, StartInclusive: startInclusive,
		End: end, HasEnd: true, EndInclusive: endInclusive}
}

// From matches components at or after start (after it when !inclusive).
func From(start string, inclusive bool) *KeyRange {
	return &KeyRange{Start: start, HasStart: true, StartInclusive: inclusive}
}

// To matches components at or before end (before it when !inclusive).
func To(end string, inclusive bool) *KeyRange {
	return &KeyRange{End: end, HasEnd: true, EndInclusive: inclusive}
}

// Prefix matches components that start with p.
func Prefix(p string) *KeyRange {
	return &KeyRange{Prefix: p, HasPrefix: true}
}

// String prints the range in interval notation, e.g. [a, c) or prefix "ab".
func (r *KeyRange) String() string {
	if r == nil {
		return "(all)"
	}
	if r.HasPrefix {
		return fmt.Sprintf("prefix %q", r.Prefix)
	}
	lo, hi := "(-inf", "+inf)"
	if r.HasStart {
		lo = "(" + fmt.Sprintf("%q", r.Start)
		if r.StartInclusive {
			lo = "[" + lo[1:]
		}
	}
	if r.HasEnd {
		hi = fmt.Sprintf("%q", r.End) + ")"
		if r.EndInclusive {
			hi = hi[:len(hi)-1] + "]"
		}
	}
	return lo + ", " + hi
}

func (r *KeyRange) toPB() *cairnpb.KeyRange {
	if r == nil {
		return nil
	}
	return &cairnpb.KeyRange{
		HasStart: r.HasStart, Start: r.Start, StartInclusive: r.StartInclusive,
		HasEnd: r.HasEnd, End: r.End, EndInclusive: r.EndInclusive,
		HasPrefix: r.HasPrefix, Prefix: r.Prefix,
	}
}
