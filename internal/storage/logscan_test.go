package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// pebbleLogs writes batches (some larger than a log block, so some records
// span chunks) into a Pebble DB on a MemFS and returns the bytes of its
// newest WAL and its MANIFEST, with the WAL's number and record count.
func pebbleLogs(t *testing.T, seed uint64, batches int) (wal []byte, walNum uint32, manifest []byte) {
	t.Helper()
	fs := vfs.NewMem()
	db, err := pebble.Open("db", &pebble.Options{FS: fs, FormatMajorVersion: pebble.FormatColumnarBlocks})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < batches; i++ {
		v := make([]byte, 100+rng.IntN(3*logBlockSize))
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		if err := db.Set([]byte(fmt.Sprintf("k%06d", i)), v, pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil { // a second log file and MANIFEST edits
		t.Fatal(err)
	}
	for i := 0; i < batches; i++ {
		if err := db.Set([]byte(fmt.Sprintf("j%06d", i)), bytes.Repeat([]byte{byte(i)}, 50+i*700), pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := fs.List("db")
	for _, n := range names {
		b := readMem(t, fs, "db/"+n)
		switch {
		case strings.HasSuffix(n, ".log"):
			var num uint32
			fmt.Sscanf(n, "%06d.log", &num)
			if num > walNum {
				wal, walNum = b, num
			}
		case strings.HasPrefix(n, "MANIFEST-"):
			manifest = b
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return wal, walNum, manifest
}

func readMem(t *testing.T, fs vfs.FS, name string) []byte {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func scanBytes(t *testing.T, b []byte, logNum uint32) logEnd {
	t.Helper()
	res, err := scanLog(bytes.NewReader(b), int64(len(b)), logNum)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestScanLogIntact(t *testing.T) {
	wal, num, manifest := pebbleLogs(t, 1, 40)
	w := scanBytes(t, wal, num)
	if w.damaged() || w.Records != 40 || w.End != int64(len(wal)) {
		t.Fatalf("intact WAL %d: %+v (len %d)", num, w, len(wal))
	}
	m := scanBytes(t, manifest, 0)
	if m.damaged() || m.Stop != -1 || m.Records == 0 {
		t.Fatalf("intact MANIFEST: %+v", m)
	}
}

// TestScanLogFlips flips bytes at random places of both logs: a flip before
// the last record is always found as damage with good records after it; a
// flip in the last record reads as a torn tail (which the checkpoint and a
// clean-stop check cover, not the scan).
func TestScanLogFlips(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	wal, num, manifest := pebbleLogs(t, seed, 40)
	for _, tc := range []struct {
		name string
		b    []byte
		num  uint32
	}{{"wal", wal, num}, {"manifest", manifest, 0}} {
		intact := scanBytes(t, tc.b, tc.num)
		lastStart := intact.LastStart
		for i := 0; i < 200; i++ {
			at := rng.IntN(len(tc.b))
			b := bytes.Clone(tc.b)
			b[at] ^= byte(1 + rng.IntN(255))
			got := scanBytes(t, b, tc.num)
			switch {
			case int64(at) < lastStart && inPadding(tc.b, at):
				// a zero-filled block tail: harmless or found, never a silent short read
				if !got.damaged() && got.Records != intact.Records {
					t.Fatalf("%s: flip at %d in padding lost records silently: %+v", tc.name, at, got)
				}
			case int64(at) < lastStart:
				if !got.damaged() {
					t.Fatalf("%s: flip at %d (last record starts at %d) not found as damage: %+v", tc.name, at, lastStart, got)
				}
				if got.Stop > int64(at) || got.Resume <= got.Stop {
					t.Fatalf("%s: flip at %d: stop %d resume %d", tc.name, at, got.Stop, got.Resume)
				}
			default:
				if got.damaged() {
					t.Fatalf("%s: flip at %d in the last record reported as damage: %+v", tc.name, at, got)
				}
			}
		}
	}
}

// inPadding reports whether b[at] is in a zero-filled block tail.
func inPadding(b []byte, at int) bool {
	if b[at] != 0 {
		return false
	}
	end := (at/logBlockSize + 1) * logBlockSize
	return end-at < recycleHeader && allZero(b[at:min(end, len(b))])
}

func TestScanLogTruncatedIsTorn(t *testing.T) {
	wal, num, _ := pebbleLogs(t, 3, 20)
	for _, cut := range []int{len(wal) - 1, len(wal) - 200, len(wal) / 2, 12} {
		got := scanBytes(t, wal[:cut], num)
		if got.damaged() {
			t.Fatalf("cut at %d reads as damage, not a torn tail: %+v", cut, got)
		}
		if got.End > int64(cut) {
			t.Fatalf("cut at %d: end %d", cut, got.End)
		}
	}
}

func TestScanLogZeroedBlockIsDamage(t *testing.T) {
	wal, num, _ := pebbleLogs(t, 4, 40)
	if len(wal) < 3*logBlockSize {
		t.Fatalf("WAL too short: %d", len(wal))
	}
	b := bytes.Clone(wal)
	clear(b[logBlockSize : 2*logBlockSize])
	got := scanBytes(t, b, num)
	if !got.damaged() || got.Stop < logBlockSize || got.Stop >= 2*logBlockSize+1 {
		t.Fatalf("a zeroed block in the middle: %+v", got)
	}
}

func TestScanLogOtherLogIsEnd(t *testing.T) {
	wal, num, _ := pebbleLogs(t, 5, 20)
	// Read as log num+7: every chunk is another log's (a recycled file's
	// old contents): no records, and not damage.
	got := scanBytes(t, wal, num+7)
	if got.damaged() || got.Records != 0 {
		t.Fatalf("%+v", got)
	}
	if !strings.Contains(got.Why, "an older log's data") {
		t.Fatalf("why %q", got.Why)
	}
}
