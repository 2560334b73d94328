package keys

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// ErrMalformed is returned (wrapped) for key text that cannot be parsed.
var ErrMalformed = errors.New("keys: malformed key")

// Key is a record key. Major has at least one component; Minor may be empty.
// A Key is a value: functions here never modify the slices they are given.
type Key struct {
	Major []string
	Minor []string
}

// New returns a key with the given major and minor paths.
func New(major []string, minor ...string) Key {
	return Key{Major: major, Minor: minor}
}

// Equal reports whether k and o have the same components.
func (k Key) Equal(o Key) bool {
	return slices.Equal(k.Major, o.Major) && slices.Equal(k.Minor, o.Minor)
}

// Path returns the full path: the major components then the minor ones.
func (k Key) Path() []string {
	p := make([]string, 0, len(k.Major)+len(k.Minor))
	return append(append(p, k.Major...), k.Minor...)
}

// String prints the key in its string form (see the package doc).
func (k Key) String() string {
	var b strings.Builder
	for _, c := range k.Major {
		b.WriteByte('/')
		escapeComponent(&b, c)
	}
	if len(k.Minor) > 0 {
		b.WriteString("/-")
		for _, c := range k.Minor {
			b.WriteByte('/')
			escapeComponent(&b, c)
		}
	}
	return b.String()
}

const hexDigits = "0123456789ABCDEF"

func escapeComponent(b *strings.Builder, c string) {
	if c == "-" {
		b.WriteString("%2D")
		return
	}
	for i := 0; i < len(c); {
		ch := c[i]
		size := 1
		if ch >= utf8.RuneSelf {
			// A byte that does not start a valid UTF-8 sequence is escaped,
			// so even an invalid key prints as valid UTF-8 (it goes into
			// error messages, which travel in protobuf strings).
			if _, size = utf8.DecodeRuneInString(c[i:]); size > 1 {
				b.WriteString(c[i : i+size])
				i += size
				continue
			}
		}
		i += size
		if ch == '%' || ch == '/' || ch < 0x20 || ch == 0x7F || ch >= utf8.RuneSelf {
			b.WriteByte('%')
			b.WriteByte(hexDigits[ch>>4])
			b.WriteByte(hexDigits[ch&15])
			continue
		}
		b.WriteByte(ch)
	}
}

// CheckUTF8 reports the first component that is not valid UTF-8, naming
// it by path and index from 0: "minor component 2 is not valid UTF-8". The
// error wraps ErrInvalid.
func (k Key) CheckUTF8() error {
	for _, p := range []struct {
		name  string
		comps []string
	}{{"major", k.Major}, {"minor", k.Minor}} {
		for i, c := range p.comps {
			if !utf8.ValidString(c) {
				return fmt.Errorf("%w: %s component %d is not valid UTF-8 (%q)", ErrInvalid, p.name, i, c)
			}
		}
	}
	return nil
}

// Parse reads a key in its string form. It requires a leading '/', at least
// one major component, valid %XX escapes and valid UTF-8 components.
func Parse(s string) (Key, error) {
	if s == "" {
		return Key{}, fmt.Errorf("%w: empty string (a key looks like /major/-/minor)", ErrMalformed)
	}
	if s[0] != '/' {
		return Key{}, fmt.Errorf("%w: %q does not start with '/'", ErrMalformed, s)
	}
	if s == "/" {
		return Key{}, fmt.Errorf("%w: \"/\" is the root of the store and names no record (scan and count take it to mean the whole store)", ErrMalformed)
	}
	var k Key
	inMinor := false
	for i, raw := range strings.Split(s[1:], "/") {
		if raw == "" {
			return Key{}, fmt.Errorf("%w: %q: component %d is empty (a doubled or trailing '/'); components are never empty", ErrMalformed, s, i+1)
		}
		if raw == "-" {
			if inMinor {
				return Key{}, fmt.Errorf("%w: %q has more than one '-' separator (write a \"-\" component as %%2D)", ErrMalformed, s)
			}
			inMinor = true
			continue
		}
		c, err := unescapeComponent(raw)
		if err != nil {
			return Key{}, fmt.Errorf("%w: %q: %v", ErrMalformed, s, err)
		}
		if inMinor {
			k.Minor = append(k.Minor, c)
		} else {
			k.Major = append(k.Major, c)
		}
	}
	if len(k.Major) == 0 {
		return Key{}, fmt.Errorf("%w: %q has an empty major path", ErrMalformed, s)
	}
	return k, nil
}

// ParsePrefix reads a parent key for a store scan: like Parse, but "" and "/"
// mean the empty key (the whole store).
func ParsePrefix(s string) (Key, error) {
	if s == "" || s == "/" {
		return Key{}, nil
	}
	return Parse(s)
}

func unescapeComponent(raw string) (string, error) {
	if !strings.Contains(raw, "%") {
		if !utf8.ValidString(raw) {
			return "", errors.New("component is not valid UTF-8")
		}
		return raw, nil
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '%' {
			out = append(out, raw[i])
			continue
		}
		if i+2 >= len(raw) {
			return "", fmt.Errorf("truncated escape at byte %d", i)
		}
		hi, ok1 := unhex(raw[i+1])
		lo, ok2 := unhex(raw[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("bad escape %q", raw[i:i+3])
		}
		out = append(out, hi<<4|lo)
		i += 2
	}
	if !utf8.Valid(out) {
		return "", errors.New("component is not valid UTF-8")
	}
	return string(out), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
