package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/time/rate"
)

// ScrubProgress is reported as a scrub goes.
type ScrubProgress struct {
	Files, FilesDone int
	Bytes, BytesDone int64
}

// VerifyBlocks reads every block of every live sstable, checking its
// checksum, at no more than bytesPerSec (0: as fast as the disk goes),
// then scans the MANIFEST and WALs as an open does. It reads files
// directly, not through the block cache, so every byte comes from the disk
// (or the OS's cache). Damage found marks the engine corrupt (so
// Config.OnCorruption runs) and is returned, wrapping ErrCorrupt and naming
// the file. Files that compactions delete while it runs are skipped.
func (e *Engine) VerifyBlocks(ctx context.Context, bytesPerSec int64, progress func(ScrubProgress)) error {
	db, l := e.acquire()
	levels, err := db.SSTables()
	e.release(l)
	if err != nil {
		return err
	}
	var p ScrubProgress
	var names []string
	for _, tables := range levels {
		for _, t := range tables {
			names = append(names, fmt.Sprintf("%06d.sst", uint64(t.BackingSSTNum)))
			p.Bytes += int64(t.Size)
		}
	}
	p.Files = len(names)
	var lim *rate.Limiter
	if bytesPerSec > 0 {
		lim = rate.NewLimiter(rate.Limit(bytesPerSec), int(min(bytesPerSec, 1<<20)))
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := e.verifyTable(ctx, name, lim, &p)
		switch {
		case files.IsNotExist(err):
			continue // compacted away meanwhile
		case ctx.Err() != nil:
			return ctx.Err() // stopped, not damage
		case err != nil && !pebble.IsCorruptionError(err):
			return fmt.Errorf("storage: verifying %s: %w", name, err) // an I/O error, not damage
		case err != nil:
			// The reader was opened without Pebble's file number.
			detail := strings.Replace(err.Error(), "file 000000", name, 1)
			return e.markCorrupt(e.fs.PathJoin(e.cfg.Dir, name), detail)
		}
		p.FilesDone++
		if progress != nil {
			progress(p)
		}
	}
	desc, err := peekManifest(e)
	if err != nil {
		return err
	}
	switch rep := e.scanLogs(desc, false); {
	case rep.err != nil:
		return rep.err
	case rep.damage != "":
		return e.markCorrupt("", rep.damage)
	}
	return nil
}

// verifyTable checks every block checksum of one sstable.
func (e *Engine) verifyTable(ctx context.Context, name string, lim *rate.Limiter, p *ScrubProgress) error {
	f, err := e.cfg.FS.Open(e.fs.PathJoin(e.cfg.Dir, name))
	if err != nil {
		return err
	}
	readable, err := sstable.NewSimpleReadable(&paced{File: f, ctx: ctx, lim: lim, p: p})
	if err != nil {
		f.Close()
		return err
	}
	r, err := sstable.NewReader(ctx, readable, sstable.ReaderOptions{})
	if err != nil {
		readable.Close()
		return err
	}
	defer r.Close()
	return r.ValidateBlockChecksums()
}

// paced reads a file at a bounded rate, counting the bytes it read.
type paced struct {
	vfs.File
	ctx context.Context
	lim *rate.Limiter
	p   *ScrubProgress
}

func (f *paced) ReadAt(b []byte, off int64) (int, error) {
	if f.lim != nil {
		for left := len(b); left > 0; {
			n := min(left, f.lim.Burst())
			if err := f.lim.WaitN(f.ctx, n); err != nil {
				return 0, err
			}
			left -= n
		}
	}
	n, err := f.File.ReadAt(b, off)
	if f.p != nil {
		f.p.BytesDone += int64(n)
	}
	return n, err
}

func peekManifest(e *Engine) (string, error) {
	desc, err := pebble.Peek(e.cfg.Dir, e.fs)
	if err != nil {
		return "", err
	}
	return desc.ManifestFilename, nil
}
