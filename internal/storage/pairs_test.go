package storage

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzPairSplitter: snapshot data from the network or a backup file, cut
// anywhere, yields the pairs (or the error) of the data read whole, and
// never panics.
func FuzzPairSplitter(f *testing.F) {
	f.Add(appendPair(appendPair(nil, []byte("rk"), []byte("v")), []byte("x"), nil), uint8(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var whole, pieces [][2][]byte
		collect := func(into *[][2][]byte) func(k, v []byte) error {
			return func(k, v []byte) error { *into = append(*into, [2][]byte{bytes.Clone(k), bytes.Clone(v)}); return nil }
		}
		var a pairSplitter
		errWhole := a.write(data, collect(&whole))
		if errWhole == nil {
			errWhole = a.end()
		}
		var b pairSplitter
		var errPieces error
		step := int(cut%16) + 1
		for rest := data; len(rest) > 0 && errPieces == nil; {
			n := min(step, len(rest))
			errPieces = b.write(rest[:n], collect(&pieces))
			rest = rest[n:]
		}
		if errPieces == nil {
			errPieces = b.end()
		}
		if (errWhole == nil) != (errPieces == nil) {
			t.Fatalf("whole: %v, in pieces of %d: %v", errWhole, step, errPieces)
		}
		if errWhole != nil && !errors.Is(errWhole, ErrCorrupt) {
			t.Fatalf("a decoding error that is not ErrCorrupt: %v", errWhole)
		}
		if len(whole) > len(pieces) || len(pieces) > len(whole) && errWhole == nil {
			t.Fatalf("%d pairs whole, %d in pieces", len(whole), len(pieces))
		}
		for i := range whole {
			if !bytes.Equal(whole[i][0], pieces[i][0]) || !bytes.Equal(whole[i][1], pieces[i][1]) {
				t.Fatalf("pair %d differs", i)
			}
		}
	})
}
