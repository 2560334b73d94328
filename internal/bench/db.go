package bench

import (
	"context"
	"fmt"
	"github.com/cairndb/cairn/api/fieldrec"
	"io"
	"sync/atomic"
)

// Status is an operation's outcome, named as YCSB's site.ycsb.Status.
type Status uint8

// The statuses. Only OK and BatchedOK are successes.
const (
	StatusOK Status = iota
	StatusError
	StatusNotFound
	StatusNotImplemented
	StatusUnexpectedState
	StatusBadRequest
	StatusForbidden
	StatusServiceUnavailable
	StatusBatchedOK
	numStatus
)

var statusNames = [numStatus]string{"OK", "ERROR", "NOT_FOUND", "NOT_IMPLEMENTED", "UNEXPECTED_STATE",
	"BAD_REQUEST", "FORBIDDEN", "SERVICE_UNAVAILABLE", "BATCHED_OK"}

func (s Status) String() string {
	if s < numStatus {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// OK reports whether s is a success (YCSB's Status.isOk).
func (s Status) OK() bool { return s == StatusOK || s == StatusBatchedOK }

// Field is one field of a record.
type Field = fieldrec.Field

// ScanRecord is one record returned by a scan.
type ScanRecord struct {
	Key    []byte
	Fields []Field
}

// DB is one thread's connection to the system under test: YCSB's DB class.
// Each client goroutine gets its own DB from a Binding and is the only one
// to call it.
//
// Slices passed in (key, fields, values) belong to the caller and may be
// reused as soon as the call returns. What a read returns in *out (the
// Field values, ScanRecord keys and fields) belongs to the DB and stays
// valid until its next call. fields nil means every field.
type DB interface {
	Read(ctx context.Context, table string, key []byte, fields []string, out *[]Field) Status
	Scan(ctx context.Context, table string, startKey []byte, count int, fields []string, out *[]ScanRecord) Status
	Update(ctx context.Context, table string, key []byte, values []Field) Status
	Insert(ctx context.Context, table string, key []byte, values []Field) Status
	Delete(ctx context.Context, table string, key []byte) Status
	// Cleanup releases the thread's resources; the DB is not used after.
	Cleanup() error
}

// Binding opens a system under test once per run and hands each client
// goroutine a DB. NewDB is called from the goroutine that runs the
// benchmark, before the client goroutines start; Close after they end.
type Binding interface {
	NewDB(thread int) (DB, error)
	Close() error
}

// errLog prints the first few operation errors of a run to stderr, so a
// failing run says why without flooding the terminal. It is safe for
// concurrent use.
type errLog struct {
	w     io.Writer
	n     atomic.Int64
	limit int64
	last  atomic.Pointer[error] // the last operation error (failed), for the give-up's message
}

// failed records err as the run's latest operation error.
func (l *errLog) failed(err error) { l.last.Store(&err) }

// lastErr is the latest error failed recorded, or nil.
func (l *errLog) lastErr() error {
	if p := l.last.Load(); p != nil {
		return *p
	}
	return nil
}

func newErrLog(w io.Writer) *errLog { return &errLog{w: w, limit: 10} }

func (l *errLog) printf(format string, args ...any) {
	switch n := l.n.Add(1); {
	case n < l.limit:
		fmt.Fprintf(l.w, format+"\n", args...)
	case n == l.limit:
		fmt.Fprintf(l.w, format+" (further errors are counted, not printed)\n", args...)
	}
}

// nullBinding is -db null: every operation succeeds at once and reads
// return nothing. It measures the benchmark itself.
type nullBinding struct{}

func (nullBinding) NewDB(int) (DB, error) { return nullDB{}, nil }
func (nullBinding) Close() error          { return nil }

type nullDB struct{}

func (nullDB) Read(context.Context, string, []byte, []string, *[]Field) Status { return StatusOK }
func (nullDB) Scan(context.Context, string, []byte, int, []string, *[]ScanRecord) Status {
	return StatusOK
}
func (nullDB) Update(context.Context, string, []byte, []Field) Status { return StatusOK }
func (nullDB) Insert(context.Context, string, []byte, []Field) Status { return StatusOK }
func (nullDB) Delete(context.Context, string, []byte) Status          { return StatusOK }
func (nullDB) Cleanup() error                                         { return nil }
