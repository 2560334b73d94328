package client

import (
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
)

// Key is a record key: a major path of one or more components and a minor
// path of zero or more. Records with the same major path live in the same
// partition, so operations on them can be atomic (see Execute).
//
// The string form is /major1/major2/-/minor1/minor2, with '%', '/' and control
// bytes escaped as %XX and a component that is exactly "-" written %2D.
type Key struct {
	Major []string
	Minor []string
}

// ParseKey reads a key in its string form. A malformed key gives an *Error
// with Code InvalidArgument and Kind "malformed_key".
func ParseKey(s string) (Key, error) {
	k, err := keys.Parse(s)
	if err != nil {
		return Key{}, &Error{Code: codes.InvalidArgument, Kind: KindMalformedKey, Action: ActionFixInput,
			Msg: strings.TrimPrefix(err.Error(), "keys: ")}
	}
	return Key(k), nil
}

// MustParseKey is ParseKey for keys known to be well formed; it panics on a
// malformed key.
func MustParseKey(s string) Key {
	k, err := ParseKey(s)
	if err != nil {
		panic(err)
	}
	return k
}

// String prints the key in its string form; ParseKey reads it back.
func (k Key) String() string { return keys.Key(k).String() }

// Equal reports whether k and o have the same components.
func (k Key) Equal(o Key) bool {
	return slices.Equal(k.Major, o.Major) && slices.Equal(k.Minor, o.Minor)
}

// checkKey refuses, before sending, a key whose components are not all
// valid UTF-8, with the error the server would give: kind "invalid_key",
// Code InvalidArgument, ActionFixInput, naming field and the component.
// (The protobuf runtime no longer refuses such strings; see kv.proto.)
func checkKey(field string, k Key) error {
	if err := keys.Key(k).CheckUTF8(); err != nil {
		return invalidKey(field, err)
	}
	return nil
}

// checkRange is checkKey for a key range's start, end and prefix (set or
// not: all three are sent). It checks UTF-8 only; the server checks the
// rest.
func checkRange(r *KeyRange) error {
	if r == nil {
		return nil
	}
	for _, f := range []struct{ name, v string }{{"start", r.Start}, {"end", r.End}, {"prefix", r.Prefix}} {
		if !utf8.ValidString(f.v) {
			return &Error{Code: codes.InvalidArgument, Kind: KindInvalidKey, Action: ActionFixInput,
				Msg: "range: key range " + f.name + " is not valid UTF-8 (" + strconv.Quote(f.v) + ")"}
		}
	}
	return nil
}

// checkScan checks a multi-key operation's parent (nil: none) and range.
func checkScan(parent *Key, r *KeyRange) error {
	if parent != nil {
		if err := checkKey("parent", *parent); err != nil {
			return err
		}
	}
	return checkRange(r)
}

func invalidKey(field string, err error) *Error {
	return &Error{Code: codes.InvalidArgument, Kind: KindInvalidKey, Action: ActionFixInput,
		Msg: field + ": " + strings.TrimPrefix(err.Error(), "keys: ")}
}

func (k Key) toPB() *cairnpb.Key {
	return &cairnpb.Key{Major: k.Major, Minor: k.Minor}
}

func keyFromPB(p *cairnpb.Key) Key {
	return Key{Major: p.GetMajor(), Minor: p.GetMinor()}
}

// Version identifies one write of a record. It is opaque: compare versions
// only for equality (bytes.Equal), and pass them back to PutIfVersion,
// DeleteIfVersion or AtVersion.
type Version []byte

// String prints the version in lowercase hex; ParseVersion reads it back.
func (v Version) String() string { return hex.EncodeToString(v) }

// ParseVersion reads a version printed by Version.String. Bad hex gives an
// *Error with Code InvalidArgument and Kind "malformed_version".
func ParseVersion(s string) (Version, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, &Error{Code: codes.InvalidArgument, Kind: KindMalformedVersion, Action: ActionFixInput,
			Msg: "version " + strconv.Quote(s) + " is not a non-empty hex string"}
	}
	return Version(b), nil
}
