package model

import (
	"bytes"
	"maps"
	"slices"
	"strings"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
)

// Expiry bounds a record's expiration time, in Unix milliseconds, inclusive.
// The zero Expiry means the record never expires.
type Expiry struct{ Lo, Hi int64 }

// Never reports whether the record never expires.
func (e Expiry) Never() bool { return e == Expiry{} }

// Contains reports whether ms is a possible expiration time (0 for never).
func (e Expiry) Contains(ms int64) bool {
	if e.Never() {
		return ms == 0
	}
	return e.Lo <= ms && ms <= e.Hi
}

// Clock is the interval, in Unix milliseconds, within which the server read
// its clock for a call: take Lo before sending the request and Hi after the
// response arrives.
type Clock struct{ Lo, Hi int64 }

// Record is the Model's state for one key.
type Record struct {
	Key     keys.Key
	Value   []byte
	Version []byte
	Expiry  Expiry

	// versionUnknown marks a record written earlier in an execute that the
	// server aborted: no response carries its version.
	versionUnknown bool
}

func (r Record) clone() Record {
	r.Key = keys.Key{Major: slices.Clone(r.Key.Major), Minor: slices.Clone(r.Key.Minor)}
	r.Value = bytes.Clone(r.Value)
	r.Version = bytes.Clone(r.Version)
	return r
}

// Model is the naive store: key string form -> record.
type Model struct {
	recs map[string]Record
}

// New returns an empty Model.
func New() *Model { return &Model{recs: make(map[string]Record)} }

// Len returns the number of records.
func (m *Model) Len() int { return len(m.recs) }

// Get returns the record for k.
func (m *Model) Get(k keys.Key) (Record, bool) {
	r, ok := m.recs[k.String()]
	if !ok {
		return Record{}, false
	}
	return r.clone(), true
}

// All returns every record in key order (major path, then minor path).
func (m *Model) All() []Record {
	out := make([]Record, 0, len(m.recs))
	for _, r := range m.recs {
		out = append(out, r.clone())
	}
	SortByKey(out)
	return out
}

// Observe narrows k's expiry to expMs once a response has shown it. It does
// nothing if k is absent or expMs is outside the record's Expiry (a
// mismatch the caller has already reported).
func (m *Model) Observe(k keys.Key, expMs int64) {
	s := k.String()
	r, ok := m.recs[s]
	if !ok || r.Expiry.Never() || !r.Expiry.Contains(expMs) {
		return
	}
	r.Expiry = Expiry{expMs, expMs}
	m.recs[s] = r
}

// Result is what the Model says one write operation returns.
type Result struct {
	// Put is set for a put: a successful put returns a new version.
	Put     bool
	Success bool
	// PreviousExists is set when the return choice asked for anything and
	// the record existed before the operation.
	PreviousExists  bool
	PreviousValue   []byte // when RETURN_VALUE or RETURN_ALL
	PreviousVersion []byte // when RETURN_VERSION or RETURN_ALL
	PreviousExpiry  Expiry // when PreviousExists
	// AnyPreviousVersion is set instead of PreviousVersion when the previous
	// record was written earlier in an aborted execute, whose versions no
	// response reports: any non-empty version is right.
	AnyPreviousVersion bool
}

// ExecuteResult is what the Model says an execute returns.
type ExecuteResult struct {
	Committed   bool
	Results     []Result // one per operation when Committed
	FailedIndex int      // when !Committed
	Failed      Result   // when !Committed
}

// Put applies a single put. version is the version the server returned for
// it (used only if the Model says the put succeeds).
func (m *Model) Put(op *cairnpb.PutOp, now Clock, version []byte) Result {
	r := m.Execute([]*cairnpb.Operation{{Op: &cairnpb.Operation_Put{Put: op}}}, now, func(int) []byte { return version })
	return r.Results[0]
}

// Delete applies a single delete.
func (m *Model) Delete(op *cairnpb.DeleteOp) Result {
	r := m.Execute([]*cairnpb.Operation{{Op: &cairnpb.Operation_Delete{Delete: op}}}, Clock{}, nil)
	return r.Results[0]
}

// Execute applies ops atomically: in order, each seeing the effects of the
// ones before it, and not at all if an operation with abort_if_unsuccessful
// fails. version(i) is the version the server returned for operation i (nil
// if the server aborted the execute); it is called only for puts the Model
// says succeed. The ops must be valid
// (the Model does not check what the server rejects).
func (m *Model) Execute(ops []*cairnpb.Operation, now Clock, version func(i int) []byte) ExecuteResult {
	stage := maps.Clone(m.recs)
	results := make([]Result, len(ops))
	for i, op := range ops {
		var r Result
		switch o := op.GetOp().(type) {
		case *cairnpb.Operation_Put:
			r = put(stage, o.Put, now, func() []byte { return version(i) })
		case *cairnpb.Operation_Delete:
			r = del(stage, o.Delete)
		default:
			panic("model: operation is neither put nor delete")
		}
		if !r.Success && op.GetAbortIfUnsuccessful() {
			return ExecuteResult{FailedIndex: i, Failed: r}
		}
		results[i] = r
	}
	m.recs = stage
	return ExecuteResult{Committed: true, Results: results}
}

func put(recs map[string]Record, op *cairnpb.PutOp, now Clock, version func() []byte) Result {
	k := keyOf(op.GetKey())
	old, exists := recs[k.String()]
	r := previous(op.GetReturn(), old, exists)
	r.Put = true
	switch op.GetCondition() {
	case cairnpb.Condition_CONDITION_UNSPECIFIED:
		r.Success = true
	case cairnpb.Condition_CONDITION_IF_ABSENT:
		r.Success = !exists
	case cairnpb.Condition_CONDITION_IF_PRESENT:
		r.Success = exists
	case cairnpb.Condition_CONDITION_IF_VERSION:
		r.Success = exists && matches(old, op.GetMatchVersion())
	default:
		panic("model: unknown put condition")
	}
	if r.Success {
		var exp Expiry
		if ttl := op.GetTtlMs(); ttl > 0 {
			exp = Expiry{now.Lo + ttl, now.Hi + ttl}
		}
		v := bytes.Clone(version())
		recs[k.String()] = Record{Key: k, Value: bytes.Clone(op.GetValue()), Version: v, Expiry: exp, versionUnknown: v == nil}
	}
	return r
}

func del(recs map[string]Record, op *cairnpb.DeleteOp) Result {
	k := keyOf(op.GetKey())
	old, exists := recs[k.String()]
	r := previous(op.GetReturn(), old, exists)
	switch op.GetCondition() {
	case cairnpb.Condition_CONDITION_UNSPECIFIED:
		r.Success = exists
	case cairnpb.Condition_CONDITION_IF_VERSION:
		r.Success = exists && matches(old, op.GetMatchVersion())
	default:
		panic("model: a delete takes no condition but IF_VERSION")
	}
	if r.Success {
		delete(recs, k.String())
	}
	return r
}

func previous(rv cairnpb.ReturnValueVersion, old Record, exists bool) Result {
	value := rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_VALUE || rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_ALL
	version := rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_VERSION || rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_ALL
	if !exists || (!value && !version) {
		return Result{}
	}
	r := Result{PreviousExists: true, PreviousExpiry: old.Expiry}
	if value {
		r.PreviousValue = bytes.Clone(old.Value)
	}
	if version {
		r.PreviousVersion = bytes.Clone(old.Version)
		r.AnyPreviousVersion = old.versionUnknown
	}
	return r
}

// matches reports whether a record has version v. A version written earlier
// in the same execute is new, so no version the client could know matches it.
func matches(r Record, v []byte) bool { return !r.versionUnknown && bytes.Equal(r.Version, v) }

// MultiDelete deletes the records a multi-get with the same parent, range
// and depth would return, and returns how many.
func (m *Model) MultiDelete(req *cairnpb.MultiDeleteRequest) int64 {
	parent := keyOf(req.GetParent())
	var n int64
	for s, r := range m.recs {
		if slices.Equal(r.Key.Major, parent.Major) && selected(parent.Path(), r.Key.Path(), req.GetRange(), req.GetDepth()) {
			delete(m.recs, s)
			n++
		}
	}
	return n
}

// MultiGet returns every record a multi-get selects, in its direction,
// ignoring batch_size and resume (the caller concatenates the pages).
func (m *Model) MultiGet(req *cairnpb.MultiGetRequest) []Record {
	parent := keyOf(req.GetParent())
	var out []Record
	for _, r := range m.recs {
		if slices.Equal(r.Key.Major, parent.Major) && selected(parent.Path(), r.Key.Path(), req.GetRange(), req.GetDepth()) {
			out = append(out, keysOnly(r.clone(), req.GetKeysOnly()))
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return slices.Compare(a.Key.Minor, b.Key.Minor) })
	if req.GetDirection() == cairnpb.Direction_DIRECTION_REVERSE {
		slices.Reverse(out)
	}
	return out
}

// StoreScan returns every record a store scan selects, in key order (the
// server's order is unspecified), ignoring batch_size and resume.
func (m *Model) StoreScan(req *cairnpb.StoreScanRequest) []Record {
	parent := req.GetParent().GetMajor()
	full := rangeFull(req.GetRange())
	var out []Record
	for _, r := range m.recs {
		if !hasPrefix(r.Key.Major, parent) || (!full && len(r.Key.Major) == len(parent)) {
			continue
		}
		if selected(parent, r.Key.Path(), req.GetRange(), req.GetDepth()) {
			out = append(out, keysOnly(r.clone(), req.GetKeysOnly()))
		}
	}
	SortByKey(out)
	return out
}

func keysOnly(r Record, only bool) Record {
	if only {
		r.Value = nil
	}
	return r
}

// selected is the Model's own reading of (parent, range, depth): the parent
// itself is selected by the PARENT_* depths, a child by every depth, a
// deeper descendant by the *_DESCENDANTS depths; a child or descendant also
// needs its component right after parent inside the range.
func selected(parent, path []string, r *cairnpb.KeyRange, d cairnpb.Depth) bool {
	if !hasPrefix(path, parent) {
		return false
	}
	if d == cairnpb.Depth_DEPTH_UNSPECIFIED {
		d = cairnpb.Depth_DEPTH_PARENT_AND_DESCENDANTS
	}
	switch len(path) - len(parent) {
	case 0:
		return d == cairnpb.Depth_DEPTH_PARENT_AND_CHILDREN || d == cairnpb.Depth_DEPTH_PARENT_AND_DESCENDANTS
	case 1:
	default:
		if d == cairnpb.Depth_DEPTH_CHILDREN_ONLY || d == cairnpb.Depth_DEPTH_PARENT_AND_CHILDREN {
			return false
		}
	}
	return inRange(r, path[len(parent)])
}

func inRange(r *cairnpb.KeyRange, c string) bool {
	if r.GetHasPrefix() {
		return strings.HasPrefix(c, r.GetPrefix())
	}
	if r.GetHasStart() && (c < r.GetStart() || (c == r.GetStart() && !r.GetStartInclusive())) {
		return false
	}
	if r.GetHasEnd() && (c > r.GetEnd() || (c == r.GetEnd() && !r.GetEndInclusive())) {
		return false
	}
	return true
}

func rangeFull(r *cairnpb.KeyRange) bool {
	return !r.GetHasPrefix() && !r.GetHasStart() && !r.GetHasEnd()
}

func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

func keyOf(k *cairnpb.Key) keys.Key {
	return keys.Key{Major: slices.Clone(k.GetMajor()), Minor: slices.Clone(k.GetMinor())}
}

// CompareKeys orders keys by major path, then minor path, component by
// component.
func CompareKeys(a, b keys.Key) int {
	if c := slices.Compare(a.Major, b.Major); c != 0 {
		return c
	}
	return slices.Compare(a.Minor, b.Minor)
}

// SortByKey sorts records by CompareKeys.
func SortByKey(rs []Record) {
	slices.SortFunc(rs, func(a, b Record) int { return CompareKeys(a.Key, b.Key) })
}
