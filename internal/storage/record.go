package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cairndb/cairn/internal/keys"
)

const (
	recordFormat    = 0x01
	recordHeaderLen = 1 + VersionLen + 8
)

// ErrCorrupt marks bytes read from disk that cannot be decoded. It is never
// retried.
var ErrCorrupt = errors.New("storage: corrupt data")

// Record is one key's stored state. Treat Value and Version as read-only:
// the records of one read from the row cache share one buffer.
type Record struct {
	Key       keys.Key
	Value     []byte
	Version   []byte // VersionLen bytes
	ExpiresMs int64  // Unix milliseconds; 0 means never
}

// liveAt reports whether a record with expiry exp is visible at nowMs.
func liveAt(exp, nowMs int64) bool { return exp == 0 || exp > nowMs }

func encodeRecord(dst []byte, version []byte, expMs int64, value []byte) []byte {
	if n := 1 + len(version) + 8 + len(value); cap(dst) < n {
		dst = make([]byte, 0, n) // one allocation, not one per append
	}
	dst = append(dst[:0], recordFormat)
	dst = append(dst, version...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(expMs))
	return append(dst, value...)
}

// recordView is a decoded record whose slices alias the input.
type recordView struct {
	version []byte
	expMs   int64
	value   []byte
}

func decodeRecord(b []byte) (recordView, error) {
	if len(b) < recordHeaderLen || b[0] != recordFormat {
		return recordView{}, fmt.Errorf("%w: record of %d bytes, format %x", ErrCorrupt, len(b), firstByte(b))
	}
	return recordView{
		version: b[1 : 1+VersionLen],
		expMs:   int64(binary.BigEndian.Uint64(b[1+VersionLen : recordHeaderLen])),
		value:   b[recordHeaderLen:],
	}, nil
}

func firstByte(b []byte) byte {
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// share returns v as a Record whose Value and Version are v's own bytes:
// only for bytes the read owns (its copy out of the row cache).
func (v recordView) share(k keys.Key, withValue bool) Record {
	r := Record{Key: k, Version: v.version, ExpiresMs: v.expMs}
	if withValue {
		r.Value = v.value
	}
	return r
}

func (v recordView) clone(k keys.Key, withValue bool) Record {
	r := Record{Key: k, Version: append([]byte(nil), v.version...), ExpiresMs: v.expMs}
	if withValue {
		r.Value = append([]byte{}, v.value...)
	}
	return r
}
