//go:build linux

package storage

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkWALSync measures what one group commit's WAL write and
// fdatasync cost on the disk under TMPDIR, for the three kinds of file a
// WAL can be: a new file that grows with each write (what Pebble creates
// when it has no log to recycle), a file fallocated ahead with
// FALLOC_FL_KEEP_SIZE (Pebble's preallocation of a new WAL), and a file
// whose blocks were all written before (a recycled WAL). On ext4 the first
// two make fdatasync commit the file's size or extent changes to the
// journal as well; the third only writes the data.
//
//	go test -run XXX -bench BenchmarkWALSync -benchtime 2000x ./internal/storage/
func BenchmarkWALSync(b *testing.B) {
	const write = 6000 // about five 10-field inserts
	b.Run("grows", func(b *testing.B) { benchWALSync(b, write, nil) })
	b.Run("fallocated", func(b *testing.B) {
		benchWALSync(b, write, func(f *os.File, size int64) error {
			return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, size)
		})
	})
	b.Run("written_before", func(b *testing.B) {
		benchWALSync(b, write, func(f *os.File, size int64) error {
			if _, err := f.Write(make([]byte, size)); err != nil {
				return err
			}
			if err := f.Sync(); err != nil {
				return err
			}
			_, err := f.Seek(0, 0)
			return err
		})
	})
}

// benchWALSync writes b.N times write bytes to a new file, each followed by
// an fdatasync, after prepare (if any) readied the file for all of them.
func benchWALSync(b *testing.B, write int, prepare func(*os.File, int64) error) {
	f, err := os.Create(filepath.Join(b.TempDir(), "000001.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if prepare != nil {
		if err := prepare(f, int64(b.N*write)); err != nil {
			b.Skipf("this file system cannot prepare the file: %v", err)
		}
	}
	buf := make([]byte, write)
	b.SetBytes(int64(write))
	b.ResetTimer()
	for range b.N {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
	}
}
