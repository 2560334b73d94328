package clustertest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cairndb/cairn/internal/topology"
)

// MountTmpfs mounts a tmpfs of size bytes on a new directory and returns
// it, or an error saying why it could not (mount needs root). It is
// unmounted when the test ends: call it before Start, so that the
// cluster's processes are gone by then (cleanups run last-registered
// first).
func MountTmpfs(t testing.TB, size int64) (string, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10), "tmpfs", dir).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("mount -t tmpfs: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
			_ = exec.Command("umount", "-l", dir).Run() // detach it: the next test must not inherit it
		}
	})
	return dir, nil
}

// FreeBytes is the free space statfs reports for dir, as available to
// unprivileged writers (what a node's engine reads).
func FreeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// MoveDataTo moves the data directory of node id, which must be stopped,
// to dir (on another file system, e.g. a tmpfs) and leaves a symbolic
// link in its place, so the node keeps its files there when it restarts.
// A heal that sets the data aside renames the link, and the fresh engine
// is made in the root again.
func (c *Cluster) MoveDataTo(id topology.NodeID, dir string) {
	c.t.Helper()
	n := c.Node(id)
	if n.Running() {
		c.t.Fatalf("move node %d's data: it runs", id)
	}
	from := filepath.Join(n.Root, "data")
	if err := copyTree(from, dir); err != nil {
		c.t.Fatalf("move node %d's data to %s: %v", id, dir, err)
	}
	if err := os.RemoveAll(from); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Symlink(dir, from); err != nil {
		c.t.Fatal(err)
	}
	fmt.Fprintf(n.log, "=== clustertest: moved %s to %s ===\n", from, dir)
}

// copyTree copies the regular files and directories under from to to.
func copyTree(from, to string) error {
	return filepath.Walk(from, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		switch {
		case fi.IsDir():
			return os.MkdirAll(dst, 0o755)
		case !fi.Mode().IsRegular():
			return errors.New(path + " is not a regular file")
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, src); err != nil {
			out.Close()
			return err
		}
		if err := out.Sync(); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
