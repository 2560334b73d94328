package storage

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrDiskFull is returned for writes refused because free disk space is below
// Config.MinFreeBytes. Nothing was written; retry after freeing space.
var ErrDiskFull = errors.New("storage: disk full: free space is below the configured minimum")

// spaceWatcher polls free space so the write path checks a flag, not statfs.
type spaceWatcher struct {
	done chan struct{}
	exit chan struct{}
}

const spacePollInterval = 500 * time.Millisecond

func startSpaceWatcher(dir string, min int64, low *atomic.Bool, log *slog.Logger) *spaceWatcher {
	w := &spaceWatcher{done: make(chan struct{}), exit: make(chan struct{})}
	check := func() {
		free, err := freeBytes(dir)
		if err != nil {
			return
		}
		isLow := free < min
		if low.Swap(isLow) != isLow {
			log.Warn("free disk space crossed the write threshold", "free_bytes", free, "min_free_bytes", min, "writes_refused", isLow)
		}
	}
	check()
	go func() {
		defer close(w.exit)
		t := time.NewTicker(spacePollInterval)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
				check()
			}
		}
	}()
	return w
}

func (w *spaceWatcher) stop() {
	close(w.done)
	<-w.exit
}

func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
