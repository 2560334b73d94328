package files

import (
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// AppendLog is an append-only file of records, such as the audit log. Each
// Append writes at the end and syncs before it returns, so a record that
// was appended survives a crash. When the file would pass maxBytes it is
// rotated: path.N-1 becomes path.N (the oldest, path.keep, is dropped),
// path becomes path.1, and a new path starts. Safe for concurrent use.
type AppendLog struct {
	mu   sync.Mutex
	fs   FS
	path string
	max  int64
	keep int
	f    vfs.File
	off  int64
}

// OpenAppendLog opens (creating if needed) the log at path.
func OpenAppendLog(fs FS, path string, maxBytes int64, keep int) (*AppendLog, error) {
	l := &AppendLog{fs: fs, path: path, max: maxBytes, keep: max(keep, 1)}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *AppendLog) open() error {
	f, err := l.fs.OpenReadWrite(l.path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("files: open %s: %w", l.path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("files: stat %s: %w", l.path, err)
	}
	l.f, l.off = f, st.Size()
	return nil
}

// Append writes rec at the end of the log and syncs it.
func (l *AppendLog) Append(rec []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("files: %s is closed", l.path)
	}
	if l.max > 0 && l.off > 0 && l.off+int64(len(rec)) > l.max {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	if _, err := l.f.WriteAt(rec, l.off); err != nil {
		return fmt.Errorf("files: append to %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("files: sync %s: %w", l.path, err)
	}
	l.off += int64(len(rec))
	return nil
}

func (l *AppendLog) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("files: close %s: %w", l.path, err)
	}
	l.f = nil
	for i := l.keep - 1; i >= 1; i-- {
		from := fmt.Sprintf("%s.%d", l.path, i)
		if _, err := l.fs.Stat(from); err == nil {
			if err := l.fs.Rename(from, fmt.Sprintf("%s.%d", l.path, i+1)); err != nil {
				return fmt.Errorf("files: rotate %s: %w", from, err)
			}
		}
	}
	if err := l.fs.Rename(l.path, l.path+".1"); err != nil {
		return fmt.Errorf("files: rotate %s: %w", l.path, err)
	}
	return l.open()
}

// Close closes the log.
func (l *AppendLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
