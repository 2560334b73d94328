package keys

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrLimit is returned (wrapped in a *LimitError) when a key or value is over
// a configured limit.
var ErrLimit = errors.New("keys: over limit")

// ErrInvalid is returned (wrapped) for a key that is structurally invalid:
// no major component, or a component that is not UTF-8.
var ErrInvalid = errors.New("keys: invalid key")

// Limits bounds keys and values. The zero value is not valid; use
// DefaultLimits.
type Limits struct {
	// MaxKeyBytes bounds the sum of the component lengths of a key, in bytes.
	// Default 10 KiB.
	MaxKeyBytes int
	// MaxValueBytes bounds a value, in bytes. Default 4 MiB.
	MaxValueBytes int
	// MaxComponents bounds the number of major plus minor components.
	// Default 64.
	MaxComponents int
}

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{MaxKeyBytes: 10 << 10, MaxValueBytes: 4 << 20, MaxComponents: 64}
}

// Validate reports whether the limits themselves are usable.
func (l Limits) Validate() error {
	if l.MaxKeyBytes <= 0 || l.MaxValueBytes <= 0 || l.MaxComponents <= 0 {
		return fmt.Errorf("keys: limits must be positive: %+v", l)
	}
	return nil
}

// LimitError says which limit was exceeded, its value, and the size seen.
type LimitError struct {
	Limit string // "max_key_bytes", "max_value_bytes" or "max_components", as StoreInfo's limits are named
	Max   int
	Seen  int
}

// Error reads as a sentence for the person who sent the key or value, e.g.
// "value is 5,000,000 bytes; the store's limit max_value_bytes is
// 4,194,304 (the node's --max-value-bytes)". errors.Is(e, ErrLimit) holds.
func (e *LimitError) Error() string {
	what := "value is %s bytes"
	switch e.Limit {
	case "max_key_bytes":
		what = "key is %s bytes"
	case "max_components":
		what = "key has %s components"
	}
	return fmt.Sprintf(what+"; the store's limit %s is %s (the node's --%s)", grouped(e.Seen), e.Limit, grouped(e.Max),
		strings.ReplaceAll(e.Limit, "_", "-"))
}

// grouped formats n with a comma between groups of three digits: 4,194,304.
func grouped(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func (e *LimitError) Unwrap() error { return ErrLimit }

// CheckKey validates a record key: at least one major component, UTF-8
// components, and within the limits.
func (l Limits) CheckKey(k Key) error {
	if len(k.Major) == 0 {
		return fmt.Errorf("%w: the major path is empty (a key needs at least one major component)", ErrInvalid)
	}
	return l.checkPath(k)
}

// CheckParent validates a parent key for a store scan, which may be empty.
func (l Limits) CheckParent(k Key) error {
	if len(k.Major) == 0 && len(k.Minor) > 0 {
		return fmt.Errorf("%w: a minor path needs a major path", ErrInvalid)
	}
	return l.checkPath(k)
}

func (l Limits) checkPath(k Key) error {
	n := len(k.Major) + len(k.Minor)
	if n > l.MaxComponents {
		return &LimitError{Limit: "max_components", Max: l.MaxComponents, Seen: n}
	}
	size := 0
	for _, c := range k.Major {
		size += len(c)
	}
	for _, c := range k.Minor {
		size += len(c)
	}
	if size > l.MaxKeyBytes {
		return &LimitError{Limit: "max_key_bytes", Max: l.MaxKeyBytes, Seen: size}
	}
	if err := checkNonEmpty(k); err != nil {
		return err
	}
	return k.CheckUTF8()
}

// checkNonEmpty refuses empty components: the string form cannot tell
// "/a//b" from a typo, and "/" would be both a record and the whole store.
func checkNonEmpty(k Key) error {
	for i, c := range k.Major {
		if c == "" {
			return fmt.Errorf("%w: major component %d is empty (components are never empty)", ErrInvalid, i+1)
		}
	}
	for i, c := range k.Minor {
		if c == "" {
			return fmt.Errorf("%w: minor component %d is empty (components are never empty)", ErrInvalid, i+1)
		}
	}
	return nil
}

// CheckValue validates a value's size.
func (l Limits) CheckValue(v []byte) error {
	if len(v) > l.MaxValueBytes {
		return &LimitError{Limit: "max_value_bytes", Max: l.MaxValueBytes, Seen: len(v)}
	}
	return nil
}
