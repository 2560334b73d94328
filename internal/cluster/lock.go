package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockName is the lock file in DIR that start, stop and kill hold.
const LockName = "cluster.lock"

// lock takes DIR/cluster.lock without waiting. The returned function
// releases it; the lock also goes when the process exits.
func lock(dir string) (func(), error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cluster: lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("cluster: another 'cairn cluster' command is working on %s (it holds %s); wait for it to finish and retry", dir, path)
		}
		return nil, fmt.Errorf("cluster: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
