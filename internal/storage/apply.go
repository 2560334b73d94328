package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"github.com/cockroachdb/pebble/v2"
)

// SyncMode is how a commit reaches the disk; larger is stronger.
type SyncMode int

// The sync modes, weakest first.
const (
	NoSync      SyncMode = 1 // may stay in Pebble's buffer in this process
	WriteNoSync SyncMode = 2 // written to the OS, not fsynced
	Sync        SyncMode = 3 // fsynced
)

// ErrBadCommand is the Result.Err of a command that cannot be applied as
// written (no operation, an empty major path, keys of several major paths in
// one batch). It is deterministic: every replica rejects the same command the
// same way, and nothing is written.
var ErrBadCommand = errors.New("storage: bad command")

// Result is what applying one command produced.
type Result struct {
	// Ops holds one result per operation of a Batch that committed.
	Ops []*cairnpb.OperationResult
	// Aborted is set when an operation with abort_if_unsuccessful failed;
	// then nothing was written, and FailedIndex/Failed say which and why.
	Aborted     bool
	FailedIndex int
	Failed      *cairnpb.OperationResult
	// Deleted counts the live records a MultiDelete or Expire removed.
	Deleted int64
	// Err is set for a command that was rejected (wraps ErrBadCommand).
	Err error
}

// Batch accumulates the effects of consecutive commands for one commit, and
// (for replicated shards) Raft log and state writes.
type Batch struct {
	e          *Engine
	b          *pebble.Batch
	origin     uint64
	shard      uint64          // whose records the commands write (0: lite)
	table      *PartitionTable // the shard's partition table; nil: none (serve all)
	replaying  bool            // a Replay applies to an INCOMING partition
	appliedKey []byte          // where Commit records the last applied index
	last       uint64          // the last index applied in this batch; 0 if none
	locked     bool            // holds the engine's swap lock (read-only engine)
	dropped    []Span          // partitions cleared: compacted after the commit (reclaim.go)
	maxMerged  int64           // the current command's bound on a merged record (0: none)

	// tracked counts the batch's writes that are known: records written by
	// write (listed in written) and writes outside the record space. While
	// every write is known (tracked == the batch's count), a read of a
	// record the batch has not written may come from the row cache (read).
	// A write made any other way only turns that off.
	tracked uint32
	written [][]byte
	wbuf    [2][]byte // written's first home
	// touch lists the records the commit writes, for the row cache; kept
	// here so that a commit allocates nothing for it.
	touch touched
}

// NewBatch starts a batch for the single-shard (lite) store whose versions
// carry origin.
func (e *Engine) NewBatch(origin uint64) *Batch {
	db, l := e.acquire()
	return &Batch{e: e, b: db.NewIndexedBatch(), origin: origin, appliedKey: metaAppliedKey, locked: l}
}

// NewShardBatch starts a batch for one replicated shard: its applied index is
// kept per shard, and its versions carry the shard's origin.
func (e *Engine) NewShardBatch(shard, origin uint64) *Batch {
	db, l := e.acquire()
	return &Batch{e: e, b: db.NewIndexedBatch(), origin: origin, shard: shard, appliedKey: shardKey(shard, shardApplied), locked: l}
}

// Skip records index as applied without a command (a Raft entry that carries
// none, such as a new leader's empty entry).
func (b *Batch) Skip(index uint64) { b.last = index }

// Close releases the batch; call it after Commit or to discard.
func (b *Batch) Close() {
	_ = b.b.Close()
	b.e.release(b.locked)
	b.locked = false
}

// Commit writes the batch, and the applied index if a command was applied,
// atomically with mode.
func (b *Batch) Commit(mode SyncMode) error {
	defer b.e.fatalOnPanic()
	rows := b.e.rows
	if rows == nil {
		return b.commitAll(mode)
	}
	t := &b.touch
	b.touched(t)
	rows.begin(t)
	err := b.commitAll(mode) // a panic leaves the stripes pending: no hits, no fills
	rows.end(t, err == nil)
	return err
}

// commitAll records the applied index and commits the batch.
func (b *Batch) commitAll(mode SyncMode) error {
	if b.last > 0 {
		var idx [8]byte
		binary.BigEndian.PutUint64(idx[:], b.last)
		if err := b.b.Set(b.appliedKey, idx[:], nil); err != nil {
			return err
		}
	}
	if err := b.commit(mode); err != nil {
		return err
	}
	if len(b.dropped) > 0 {
		b.e.reclaimLater(b.dropped)
	}
	return nil
}

// touched lists the records this batch writes, for the row cache: any
// range deletion or ingestion (or a batch it cannot read) touches every one.
func (b *Batch) touched(t *touched) {
	t.all, t.items = false, t.buf[:0]
	r := b.b.Reader()
	for {
		kind, ukey, val, ok, err := r.Next()
		switch {
		case err != nil:
			t.all = true
			return
		case !ok:
			return
		case kind == pebble.InternalKeyKindSet:
			t.note(ukey, val, wrotePut)
		case kind == pebble.InternalKeyKindRangeDelete && !overlapsRecords(ukey, val):
			// a Raft log truncation or a shard's states: no record
		case kind == pebble.InternalKeyKindDelete || kind == pebble.InternalKeyKindSingleDelete ||
			kind == pebble.InternalKeyKindDeleteSized:
			t.note(ukey, nil, wroteDelete)
		case kind == pebble.InternalKeyKindMerge || kind == pebble.InternalKeyKindLogData:
			t.note(ukey, nil, wroteUnknown)
		default:
			t.all = true
			return
		}
	}
}

// overlapsRecords reports whether [start, end) holds record keys.
func overlapsRecords(start, end []byte) bool {
	return bytes.Compare(end, []byte{keys.RecordSpace}) > 0 && bytes.Compare(start, []byte{keys.RecordSpace + 1}) < 0
}

func (b *Batch) commit(mode SyncMode) error {
	b.e.wrote.note(b.b)
	switch mode {
	case NoSync:
		return b.b.Commit(pebble.NoSync)
	case Sync: // see walFS: this makes the WAL fsync real
		noteSyncCommit()
		b.e.fs.needSync.Add(1)
		defer b.e.fs.needSync.Add(-1)
	}
	return b.b.Commit(pebble.Sync)
}

// Apply applies cmd as the command at index. Indexes must increase by one
// across calls on the engine (the caller's contract; Apply does not check).
func (b *Batch) Apply(index uint64, cmd *commandpb.Command) Result {
	b.last = index
	switch body := cmd.GetBody().(type) {
	case *commandpb.Command_Batch:
		b.maxMerged = body.Batch.GetMaxMergedBytes()
		return b.applyOps(index, cmd.GetNowMs(), body.Batch.GetOps())
	case *commandpb.Command_MultiDelete:
		return b.applyMultiDelete(cmd.GetNowMs(), body.MultiDelete)
	case *commandpb.Command_Expire:
		return b.applyExpire(cmd.GetNowMs(), body.Expire)
	case *commandpb.Command_Checksum:
		return Result{} // changes nothing: the replica reads a view at this index (checksum.go)
	}
	if r, ok := b.applyMove(index, cmd); ok {
		return r
	}
	return Result{Err: fmt.Errorf("%w: command has no body", ErrBadCommand)}
}

// pending is an operation's effect held until its batch is known to commit.
type pending struct {
	sk      []byte
	deleted bool
	rec     []byte // encoded record when !deleted
	expMs   int64
}

// overlay makes a multi-operation batch atomic: operations read their
// predecessors' effects from it, and it reaches Pebble only if no operation
// aborts.
type overlay struct {
	byKey map[string]*pending
	order []*pending
}

func (o *overlay) put(p *pending) {
	if o.byKey == nil {
		o.byKey = make(map[string]*pending)
	}
	if old, ok := o.byKey[string(p.sk)]; ok {
		*old = *p
		return
	}
	o.byKey[string(p.sk)] = p
	o.order = append(o.order, p)
}

func (b *Batch) applyOps(index uint64, now int64, ops []*cairnpb.Operation) Result {
	if err := checkOps(ops); err != nil {
		return Result{Err: err}
	}
	if err := b.serves(opKey(ops[0]).GetMajor()); err != nil {
		return Result{Err: err}
	}
	var ov overlay
	res := make([]*cairnpb.OperationResult, len(ops))
	for i, op := range ops {
		r, err := b.applyOp(&ov, index, now, op)
		if err != nil {
			return Result{Err: err}
		}
		if !r.Success && op.GetAbortIfUnsuccessful() {
			return Result{Aborted: true, FailedIndex: i, Failed: r}
		}
		res[i] = r
	}
	for _, p := range ov.order {
		if err := b.write(p); err != nil {
			return Result{Err: err}
		}
	}
	return Result{Ops: res}
}

// serves returns nil if the batch's shard serves major's partition (or is
// replaying a command into an INCOMING one), else a *PartitionError.
func (b *Batch) serves(major []string) error {
	if b.table == nil || b.replaying {
		return nil
	}
	return b.table.Serves(b.shard, keys.Hash(major))
}

// checkOps rejects batches that apply cannot make atomic or meaningful.
func checkOps(ops []*cairnpb.Operation) error {
	if len(ops) == 0 {
		return fmt.Errorf("%w: no operations", ErrBadCommand)
	}
	var first []string
	for i, op := range ops {
		k := opKey(op)
		if k == nil || len(k.GetMajor()) == 0 {
			return fmt.Errorf("%w: operation %d has no key or an empty major path", ErrBadCommand, i)
		}
		// The server refused such a key already; here it keeps every
		// stored key valid UTF-8 whoever proposed the command, so reads
		// never send invalid UTF-8 back (kv.proto lets it through).
		if err := keyFromPB(k).CheckUTF8(); err != nil {
			return fmt.Errorf("%w: operation %d: %v", ErrBadCommand, i, err)
		}
		if i == 0 {
			first = k.GetMajor()
		} else if !slices.Equal(first, k.GetMajor()) {
			return fmt.Errorf("%w: operation %d's major path differs from operation 0's", ErrBadCommand, i)
		}
	}
	return nil
}

func opKey(op *cairnpb.Operation) *cairnpb.Key {
	switch o := op.GetOp().(type) {
	case *cairnpb.Operation_Put:
		return o.Put.GetKey()
	case *cairnpb.Operation_Delete:
		return o.Delete.GetKey()
	}
	return nil
}

func (b *Batch) write(p *pending) error {
	if b.e.rows != nil {
		if b.written == nil {
			b.written = b.wbuf[:0]
		}
		b.written = append(b.written, p.sk)
	}
	if p.deleted {
		return b.other(b.b.Delete(p.sk, nil))
	}
	if err := b.other(b.b.Set(p.sk, p.rec, nil)); err != nil {
		return err
	}
	if p.expMs != 0 {
		return b.other(b.b.Set(expiryKey(p.expMs, p.sk), nil, nil))
	}
	return nil
}

// other counts a write whose record keys, if any, are in written (see
// Batch.tracked), and passes err on.
func (b *Batch) other(err error) error {
	if err == nil {
		b.tracked++
	}
	return err
}

// maxCachedReadWrites bounds the records a batch may have written and
// still read from the row cache: each read compares them all.
const maxCachedReadWrites = 64

// cached returns sk's committed stored bytes from the row cache, if it has
// them and the batch has made no write to sk (nor one it cannot account
// for). One shard's commits are serial and this batch's apply goroutine
// makes them, so the cache holds the latest committed bytes or nothing.
func (b *Batch) cached(sk []byte) ([]byte, bool) {
	if b.e.rows == nil || b.b.Count() != b.tracked || len(b.written) > maxCachedReadWrites {
		return nil, false
	}
	for _, w := range b.written { // a batch writes few records
		if bytes.Equal(w, sk) {
			return nil, false
		}
	}
	rec, _, hit := b.e.rows.getRecord(sk)
	return rec, hit
}

// read returns the live record at sk as of this batch and overlay.
func (b *Batch) read(ov *overlay, sk []byte, now int64) (recordView, bool, error) {
	if p, ok := ov.byKey[string(sk)]; ok {
		if p.deleted {
			return recordView{}, false, nil
		}
		v, err := decodeRecord(p.rec)
		return v, err == nil, err
	}
	if rec, ok := b.cached(sk); ok {
		v, err := decodeRecord(rec)
		if err != nil {
			return recordView{}, false, err
		}
		return v, liveAt(v.expMs, now), nil
	}
	raw, closer, err := b.b.Get(sk)
	if errors.Is(err, pebble.ErrNotFound) {
		return recordView{}, false, nil
	} else if err != nil {
		return recordView{}, false, err
	}
	v, err := decodeRecord(bytes.Clone(raw))
	closer.Close()
	if err != nil {
		return recordView{}, false, err
	}
	return v, liveAt(v.expMs, now), nil
}

func (b *Batch) applyOp(ov *overlay, index uint64, now int64, op *cairnpb.Operation) (*cairnpb.OperationResult, error) {
	switch o := op.GetOp().(type) {
	case *cairnpb.Operation_Put:
		return b.applyPut(ov, index, now, o.Put)
	case *cairnpb.Operation_Delete:
		return b.applyDelete(ov, now, o.Delete)
	}
	return nil, fmt.Errorf("%w: operation has no put or delete", ErrBadCommand)
}

func (b *Batch) applyPut(ov *overlay, index uint64, now int64, put *cairnpb.PutOp) (*cairnpb.OperationResult, error) {
	sk := keys.Encode(b.shard, keyFromPB(put.GetKey()))
	needOld := put.GetCondition() != cairnpb.Condition_CONDITION_UNSPECIFIED || wantsPrevious(put.GetReturn()) || put.GetMergeFields()
	var old recordView
	var exists bool
	if needOld {
		var err error
		if old, exists, err = b.read(ov, sk, now); err != nil {
			return nil, err
		}
	}
	r := &cairnpb.OperationResult{}
	fillPrevious(r, put.GetReturn(), old, exists)
	switch put.GetCondition() {
	case cairnpb.Condition_CONDITION_IF_ABSENT:
		r.Success = !exists
	case cairnpb.Condition_CONDITION_IF_PRESENT:
		r.Success = exists
	case cairnpb.Condition_CONDITION_IF_VERSION:
		r.Success = exists && bytes.Equal(old.version, put.GetMatchVersion())
	default:
		r.Success = true
	}
	if !r.Success {
		return r, nil
	}
	var exp int64
	if ttl := put.GetTtlMs(); ttl > 0 {
		exp = now + ttl
	}
	version := MakeVersion(b.origin, index)
	var rec []byte
	if put.GetMergeFields() && exists {
		var err error
		if rec, err = b.mergeRecord(version, exp, old.value, put.GetValue()); err != nil {
			return nil, err
		}
	} else {
		rec = encodeRecord(nil, version, exp, put.GetValue())
	}
	ov.put(&pending{sk: sk, rec: rec, expMs: exp})
	r.NewVersion = version
	return r, nil
}

func (b *Batch) applyDelete(ov *overlay, now int64, del *cairnpb.DeleteOp) (*cairnpb.OperationResult, error) {
	sk := keys.Encode(b.shard, keyFromPB(del.GetKey()))
	old, exists, err := b.read(ov, sk, now)
	if err != nil {
		return nil, err
	}
	r := &cairnpb.OperationResult{}
	fillPrevious(r, del.GetReturn(), old, exists)
	switch del.GetCondition() {
	case cairnpb.Condition_CONDITION_IF_VERSION:
		r.Success = exists && bytes.Equal(old.version, del.GetMatchVersion())
	case cairnpb.Condition_CONDITION_UNSPECIFIED:
		r.Success = exists
	default:
		return nil, fmt.Errorf("%w: delete takes no condition %v", ErrBadCommand, del.GetCondition())
	}
	if r.Success {
		ov.put(&pending{sk: sk, deleted: true})
	}
	return r, nil
}

func wantsPrevious(rv cairnpb.ReturnValueVersion) bool {
	return rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_VALUE || rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_VERSION ||
		rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_ALL
}

func fillPrevious(r *cairnpb.OperationResult, rv cairnpb.ReturnValueVersion, old recordView, exists bool) {
	if !wantsPrevious(rv) || !exists {
		return
	}
	r.PreviousExists = true
	r.PreviousExpirationMs = old.expMs
	if rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_VALUE || rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_ALL {
		r.PreviousValue = bytes.Clone(old.value)
		if r.PreviousValue == nil {
			r.PreviousValue = []byte{}
		}
	}
	if rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_VERSION || rv == cairnpb.ReturnValueVersion_RETURN_VALUE_VERSION_ALL {
		r.PreviousVersion = bytes.Clone(old.version)
	}
}

func keyFromPB(k *cairnpb.Key) keys.Key {
	return keys.Key{Major: k.GetMajor(), Minor: k.GetMinor()}
}
