package clustertest

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
)

// Kind is an operation's kind.
type Kind int

// The kinds a History records.
const (
	Put Kind = iota + 1 // an unconditional put of a unique value
	Get                 // a read of one key
)

func (k Kind) String() string {
	switch k {
	case Put:
		return "put"
	case Get:
		return "get"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Outcome is what a client learned about an operation.
type Outcome int

// The outcomes.
const (
	// OK: the operation was acknowledged (a read: it answered).
	OK Outcome = iota + 1
	// Failed: a write that was certainly not applied, or a read that
	// failed. The linearizability check leaves these out.
	Failed
	// Unknown: a write that may or may not have been applied.
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Op is one operation of a History.
type Op struct {
	Client int    // the goroutine (or other actor) that issued it
	Kind   Kind   // Put or Get
	Key    string // the key, in any stable string form
	// Value is the value a Put wrote (unique in the history) or a Get read
	// (when Found).
	Value string
	Found bool // a Get found a record
	// Call and Return are nanoseconds since the History began, on the
	// monotonic clock. For an Unknown write, Return is when the client gave
	// up; the checker treats it as +infinity.
	Call, Return int64
	Outcome      Outcome
	Err          string // for Failed and Unknown: the error's kind (or code)
	Note         string // free text, e.g. "shard 1" or "raw to node 2"
}

func (o Op) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s..%s] c%d %s %s", time.Duration(o.Call), time.Duration(o.Return), o.Client, o.Kind, o.Key)
	switch {
	case o.Kind == Put:
		fmt.Fprintf(&b, " := %q", o.Value)
	case o.Found:
		fmt.Fprintf(&b, " -> %q", o.Value)
	case o.Outcome == OK:
		b.WriteString(" -> absent")
	}
	fmt.Fprintf(&b, " %s", o.Outcome)
	if o.Err != "" {
		fmt.Fprintf(&b, " (%s)", o.Err)
	}
	if o.Note != "" {
		fmt.Fprintf(&b, " [%s]", o.Note)
	}
	return b.String()
}

// History records operations. It is safe for concurrent use.
type History struct {
	start time.Time
	mu    sync.Mutex
	ops   []Op
}

// NewHistory starts a history; its clock starts now.
func NewHistory() *History { return &History{start: time.Now()} }

// Now returns the history's clock: monotonic nanoseconds since it began.
func (h *History) Now() int64 { return int64(time.Since(h.start)) }

// Add records op.
func (h *History) Add(op Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// Ops returns a copy of the recorded operations, in the order recorded.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ops)
}

// ClientWriteOutcome classifies the error of a write made through package
// client: nil is OK; an error matching client.ErrOutcomeUnknown (MaybeApplied)
// is Unknown; any other is Failed, because the client returns other errors
// only for writes it knows were not applied.
func ClientWriteOutcome(err error) Outcome {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, client.ErrOutcomeUnknown):
		return Unknown
	}
	return Failed
}

// RawWriteOutcome classifies the error of a write sent with a raw gRPC
// stub: a status with an ErrorDetail is Unknown if the detail says
// maybe_applied and Failed otherwise; a status without one (the connection
// broke, the client's deadline passed) is Unknown, since the request may
// have reached the node.
func RawWriteOutcome(err error) Outcome {
	if err == nil {
		return OK
	}
	if d := Detail(err); d != nil {
		if d.GetMaybeApplied() {
			return Unknown
		}
		return Failed
	}
	return Unknown
}

// Detail returns the ErrorDetail of a gRPC error, or nil.
func Detail(err error) *cairnpb.ErrorDetail {
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	for _, d := range st.Details() {
		if ed, ok := d.(*cairnpb.ErrorDetail); ok {
			return ed
		}
	}
	return nil
}

// ErrKind names an error for statistics: the client's or the detail's kind,
// else the gRPC code.
func ErrKind(err error) string {
	if err == nil {
		return ""
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		k := ce.Kind
		if k == "" {
			k = ce.Code.String()
		}
		if ce.MaybeApplied {
			k += "/maybe_applied"
		}
		return k
	}
	if d := Detail(err); d != nil {
		k := d.GetKind()
		if d.GetMaybeApplied() {
			k += "/maybe_applied"
		}
		return k
	}
	if st, ok := status.FromError(err); ok {
		return st.Code().String()
	}
	return err.Error()
}

// Stats summarizes a history.
type Stats struct {
	Ops      int            // every operation
	Puts     int            // acknowledged puts
	Gets     int            // answered gets
	Failed   map[string]int // failed operations by "kind: error"
	Unknown  map[string]int // unknown-outcome writes by error
	Duration time.Duration  // from the first call to the last return
}

// Stats counts the history's operations.
func (h *History) Stats() Stats {
	s := Stats{Failed: map[string]int{}, Unknown: map[string]int{}}
	var first, last int64 = -1, 0
	for _, op := range h.Ops() {
		s.Ops++
		if first < 0 || op.Call < first {
			first = op.Call
		}
		last = max(last, op.Return)
		switch op.Outcome {
		case OK:
			if op.Kind == Put {
				s.Puts++
			} else {
				s.Gets++
			}
		case Failed:
			s.Failed[op.Kind.String()+": "+op.Err]++
		case Unknown:
			s.Unknown[op.Err]++
		}
	}
	if first >= 0 {
		s.Duration = time.Duration(last - first)
	}
	return s
}

func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d ops in %v: %d puts acknowledged, %d gets answered, %d failed, %d unknown outcomes",
		s.Ops, s.Duration.Round(time.Millisecond), s.Puts, s.Gets, sum(s.Failed), sum(s.Unknown))
	if len(s.Failed) > 0 {
		fmt.Fprintf(&b, "; failed by kind: %s", formatCounts(s.Failed))
	}
	if len(s.Unknown) > 0 {
		fmt.Fprintf(&b, "; unknown by kind: %s", formatCounts(s.Unknown))
	}
	return b.String()
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
