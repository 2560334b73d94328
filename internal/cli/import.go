package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cairndb/cairn/client"
)

// ImportArgs are import's arguments.
type ImportArgs struct {
	File string // --file; "" or "-" for stdin
}

// importChunk bounds the records (and value bytes) handed to one PutMany,
// which groups them by shard and keeps several requests in flight.
const (
	importChunk      = 8000
	importChunkBytes = 32 << 20
)

// Import writes the records of an export file into the store
// (docs/design/20261129_export_import.md). A named file is checked whole
// first, and nothing is written unless every line is good; stdin is
// checked line by line as it is written. Records are overwritten; a
// record whose expiration has passed is skipped.
func (kv *KV) Import(ctx context.Context, a ImportArgs) error {
	start := time.Now()
	if a.File == "" || a.File == "-" {
		return kv.importFrom(ctx, newExportReader("stdin", kv.In), 0, start)
	}
	f, err := os.Open(a.File)
	if err != nil {
		return Usagef("--file: %v", err)
	}
	defer f.Close()
	prog := kv.progress("import (checking the file)", start)
	total, err := checkExport(newExportReader(a.File, f), prog)
	if err != nil {
		return err
	}
	prog.done(fmt.Sprintf("%d records checked", total), total)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return kv.importFrom(ctx, newExportReader(a.File, f), total, time.Now())
}

// checkExport reads a whole export file and returns its record count, or
// the first thing wrong with it. prog may be nil.
func checkExport(x *exportReader, prog *progress) (int64, error) {
	for {
		_, err := x.next()
		if err == io.EOF {
			return x.records, nil
		}
		if err != nil {
			return 0, err
		}
		if prog != nil && x.records%256 == 0 {
			prog.tick(x.records, 0)
		}
	}
}

// importFrom writes x's records in chunks; total is their count when
// known (0: stdin).
func (kv *KV) importFrom(ctx context.Context, x *exportReader, total int64, start time.Time) error {
	prog := kv.progress("import", start)
	var (
		chunk            []importRecord
		size             int
		written, expired int64
	)
	flush := func() error {
		w, e, err := kv.importChunk(ctx, x.path, chunk)
		written, expired = written+w, expired+e
		chunk, size = chunk[:0], 0
		if err != nil && ctx.Err() != nil {
			return &stopped{err: context.Cause(ctx), note: fmt.Sprintf("%d records were written before the import stopped; import the file again to write the rest", written)}
		}
		if err != nil {
			again := "fix that record and import the file again"
			if ExitCode(err) == ExitUnavailable {
				again = "import the file again once the store answers"
			}
			return &stopped{err: err, note: fmt.Sprintf("%d records were written before the import stopped; %s (records already written are written again, with the same values)", written, again)}
		}
		prog.tick(written+expired, total)
		return nil
	}
	for {
		rec, err := x.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if written > 0 || len(chunk) > 0 {
				if ferr := flush(); ferr != nil {
					return ferr
				}
				return &stopped{err: err, note: fmt.Sprintf("the %d records before it were written", written)}
			}
			return err
		}
		chunk, size = append(chunk, rec), size+len(rec.value)
		if len(chunk) >= importChunk || size >= importChunkBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	summary := fmt.Sprintf("%d records imported from %s", written, x.path)
	if expired > 0 {
		summary += fmt.Sprintf(" (%d had expired and were skipped)", expired)
	}
	prog.done(summary, written+expired)
	return nil
}

// importChunk writes recs with one PutMany, each with the time it has
// left to live, and returns how many were written and how many had
// expired. The first record the store refused is the error, with its line.
func (kv *KV) importChunk(ctx context.Context, path string, recs []importRecord) (written, expired int64, err error) {
	if len(recs) == 0 {
		return 0, 0, nil
	}
	now := time.Now()
	entries := make([]client.Entry, 0, len(recs))
	from := make([]importRecord, 0, len(recs))
	for _, r := range recs {
		e := client.Entry{Key: r.key, Value: r.value}
		if !r.expiration.IsZero() {
			if e.TTL = r.expiration.Sub(now); e.TTL <= 0 {
				expired++
				continue
			}
		}
		entries, from = append(entries, e), append(from, r)
	}
	var first error
	for i, res := range kv.Client.PutMany(ctx, entries, 0) {
		if res.Err == nil {
			written++
		} else if first == nil {
			first = &stopped{at: fmt.Sprintf("%s line %d (%s)", path, from[i].line, from[i].key), err: res.Err}
		}
	}
	return written, expired, first
}

// stopped is a long command's failure after it did part of its work: its
// message is "AT: " err's, then "; NOTE" (how far it got), and its exit
// code is err's.
type stopped struct {
	at   string // where: "line 17 (/a/-/b)"; "" for nowhere in particular
	err  error
	note string
}

func (e *stopped) Error() string {
	s := Message(e.err)
	if e.at != "" {
		s = e.at + ": " + s
	}
	if e.note != "" {
		s += "; " + e.note
	}
	return s
}

// ExitCode is err's.
func (e *stopped) ExitCode() int { return ExitCode(e.err) }
