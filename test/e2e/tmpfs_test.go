package e2e

// A small real file system for the disk-full tests: a tmpfs the test
// mounts itself (as root; the test is skipped where mount is not allowed),
// free space read with statfs, and ballast files that take space away and
// give it back.

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/cairndb/cairn/test/clustertest"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory and returns
// it (clustertest.MountTmpfs: unmounted when the test ends, after the
// processes the test starts later). Where mount is not allowed the test is
// skipped, saying why.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir, err := clustertest.MountTmpfs(t, size)
	if err != nil {
		t.Skipf("this test needs a small real file system: %v; run it as root where mount is allowed", err)
	}
	t.Logf("mounted a %d MiB tmpfs on %s", size>>20, dir)
	return dir
}

// freeBytes is the free space statfs reports for dir, as available to
// unprivileged writers (what the engine reads).
func freeBytes(t testing.TB, dir string) int64 {
	t.Helper()
	n, err := clustertest.FreeBytes(dir)
	if err != nil {
		t.Fatalf("statfs %s: %v", dir, err)
	}
	return n
}

// freeBytesNoFail is freeBytes for goroutines other than the test's: a
// failed statfs reads as plenty.
func freeBytesNoFail(dir string) int64 {
	n, err := clustertest.FreeBytes(dir)
	if err != nil {
		return 1 << 62
	}
	return n
}

// writeBallast writes a file of size bytes of zeros (tmpfs stores every
// page, so zeros take space) and returns its path.
func writeBallast(t testing.TB, path string, size int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for size > 0 {
		n := min(size, int64(len(buf)))
		if _, err := f.Write(buf[:n]); err != nil {
			t.Fatalf("ballast %s: %v", path, err)
		}
		size -= n
	}
	return path
}

// fillDisk writes a ballast file at path until the file system has no
// room left (ENOSPC), and returns how many bytes it wrote.
func fillDisk(t testing.TB, path string) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n int64
	for len(buf) > 0 {
		w, err := f.Write(buf)
		n += int64(w)
		switch {
		case errors.Is(err, syscall.ENOSPC):
			buf = buf[:len(buf)/2] // fill the last pages too
		case err != nil:
			t.Fatalf("filling %s: %v", path, err)
		}
	}
	return n
}
