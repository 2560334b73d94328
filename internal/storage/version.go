package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// VersionLen is the length of an encoded version.
const VersionLen = 16

// ErrBadVersion is returned (wrapped) for version bytes that are not 16 bytes.
var ErrBadVersion = errors.New("storage: malformed version")

// MakeVersion encodes a version: origin then index, both big-endian.
func MakeVersion(origin, index uint64) []byte {
	v := make([]byte, VersionLen)
	binary.BigEndian.PutUint64(v[0:8], origin)
	binary.BigEndian.PutUint64(v[8:16], index)
	return v
}

// ParseVersion decodes a version made by MakeVersion.
func ParseVersion(v []byte) (origin, index uint64, err error) {
	if len(v) != VersionLen {
		return 0, 0, fmt.Errorf("%w: %d bytes, want %d (pass a version exactly as a write returned it)", ErrBadVersion, len(v), VersionLen)
	}
	return binary.BigEndian.Uint64(v[0:8]), binary.BigEndian.Uint64(v[8:16]), nil
}
