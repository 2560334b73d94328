package bench

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/internal/bench/dist"
)

// worker is one client goroutine: YCSB's ClientThread with the per-thread
// half of CoreWorkload. It owns its Rand, buffers, DB and threadStats.
type worker struct {
	w     *Workload
	cfg   *Config
	db    DB
	ctx   context.Context
	r     *dist.Rand
	keys  generator
	st    *threadStats
	epoch time.Time // the run's time origin (monotonic)
	stop  *atomic.Bool
	stopC <-chan struct{}
	log   *errLog

	ist int64 // intended start of the next operation (ns since epoch); 0: none

	key     []byte
	vals    []Field // one per field
	valBuf  []byte  // backing store of vals, slot bytes per field
	slot    int
	one     [1]string
	readOut []Field
	scanOut []ScanRecord
	verBuf  []byte
}

func newWorker(w *Workload, db DB, thread int, st *threadStats, epoch time.Time) *worker {
	cfg := w.cfg
	k := &worker{w: w, cfg: cfg, db: db, st: st, epoch: epoch,
		r: dist.NewRand(cfg.Seed, uint64(thread))}
	if cfg.Phase == PhaseRun {
		k.keys = w.keyChooser()
	}
	// A field slot holds a value of fieldlength bytes, plus room for
	// appendDeterministic to overshoot before it truncates.
	k.slot = cfg.FieldLength + 48 + cfg.ZeroPadding + len(cfg.FieldNamePrefix)
	k.valBuf = make([]byte, k.slot*cfg.FieldCount)
	k.vals = make([]Field, cfg.FieldCount)
	k.key = make([]byte, 0, 32+cfg.ZeroPadding)
	k.readOut = make([]Field, 0, cfg.FieldCount)
	k.verBuf = make([]byte, 0, k.slot)
	return k
}

func (k *worker) now() int64 { return int64(time.Since(k.epoch)) }

// intendedStart is YCSB's getIntendedStartTimeNs: the throttle's deadline
// for this operation, or now when there is none. It is only read when
// intended latencies are measured.
func (k *worker) intendedStart() int64 {
	if k.st.mode == MeasureOp || k.ist == 0 {
		return 0
	}
	return k.ist
}

// startTimes returns the intended and actual start of an operation.
func (k *worker) startTimes() (ist, st int64) {
	st = k.now()
	ist = k.intendedStart()
	if ist == 0 {
		ist = st
	}
	return ist, st
}

// loop runs opcount operations (0: until stopped), throttled to one per
// tickNs when tickNs > 0, then cleans up the DB. It is YCSB's
// ClientThread.run.
func (k *worker) loop(opcount int64, tickNs int64) error {
	op := k.doInsert
	if k.cfg.Phase == PhaseRun {
		op = k.doTransaction
	}
	if tickNs > 0 && tickNs >= int64(time.Millisecond) {
		// Spread the threads' first operations over a tick (YCSB does
		// this when a thread's target is at most one operation per ms).
		k.sleepUntil(k.now() + k.r.Int64N(tickNs))
	}
	start := k.now()
	var done int64
	var err error
	for (opcount == 0 || done < opcount) && !k.stop.Load() {
		if err = op(); err != nil {
			break
		}
		done++
		k.st.done.Store(done)
		if tickNs > 0 {
			deadline := start + done*tickNs
			k.sleepUntil(deadline)
			k.ist = deadline
		}
	}
	k.ist = 0
	ist, st := k.startTimes()
	cerr := k.db.Cleanup()
	k.st.measure(opCleanup, StatusOK, ist, st, k.now())
	if err == nil && cerr != nil {
		err = fmt.Errorf("bench: cleanup: %w", cerr)
	}
	return err
}

// sleepUntil waits until the deadline (ns since epoch) or a stop request.
func (k *worker) sleepUntil(deadline int64) {
	d := time.Duration(deadline - k.now())
	if d <= 0 {
		return
	}
	if d < 10*time.Millisecond {
		time.Sleep(d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-k.stopC:
	}
}

// doInsert is CoreWorkload.doInsert: insert the next key of the load,
// retrying a failure core_workload_insertion_retry_limit times.
func (k *worker) doInsert() error {
	keynum := k.w.keySeq.Next()
	k.key = AppendKeyName(k.key[:0], keynum, k.cfg.ZeroPadding, k.cfg.OrderedInserts)
	vals := k.buildValues()
	for attempt := 1; ; attempt++ {
		if k.insert(vals).OK() {
			return nil
		}
		if attempt > k.cfg.InsertionRetryLimit {
			k.log.printf("Error inserting, not retrying any more. number of attempts: %d. Insertion Retry Limit: %d",
				attempt, k.cfg.InsertionRetryLimit)
			return nil
		}
		k.log.printf("Retrying insertion, retry count: %d", attempt)
		wait := time.Duration(float64(k.cfg.InsertionRetryInterval) * (0.8 + 0.4*k.r.Float64()))
		k.sleepUntil(k.now() + int64(wait))
		if k.stop.Load() {
			return nil
		}
	}
}

// doTransaction is CoreWorkload.doTransaction: one operation of the mix.
func (k *worker) doTransaction() error {
	switch k.w.opKinds[k.w.ops.Next(k.r)] {
	case opRead:
		k.txRead()
	case opUpdate:
		k.txUpdate()
	case opInsert:
		return k.txInsert()
	case opScan:
		k.txScan()
	case opRMW:
		k.txReadModifyWrite()
	}
	return nil
}

// nextKeynum is CoreWorkload.nextKeynum: a key number that has been
// inserted (at most the insert counter's Last).
func (k *worker) nextKeynum() int64 {
	last := k.w.insertSeq.Last
	if e := k.w.exp; e != nil {
		for {
			if n := last() - e.Next(k.r); n >= 0 {
				return n
			}
		}
	}
	for {
		if n := k.keys.Next(k.r); n <= last() {
			return n
		}
	}
}

func (k *worker) setKey(keynum int64) {
	k.key = AppendKeyName(k.key[:0], keynum, k.cfg.ZeroPadding, k.cfg.OrderedInserts)
}

// readFields is the field list of a read: one random field, or all fields
// (named when verifying or with readallfieldsbyname, else nil).
func (k *worker) readFields() []string {
	switch {
	case !k.cfg.ReadAllFields:
		k.one[0] = k.w.names[k.w.fields.Next(k.r)]
		return k.one[:]
	case k.cfg.DataIntegrity || k.cfg.ReadAllFieldsByName:
		return k.w.names
	}
	return nil
}

func (k *worker) value(i int) []byte { return k.valBuf[i*k.slot : i*k.slot : (i+1)*k.slot] }

// buildValues fills every field: random bytes of the field length
// distribution, or with dataintegrity the deterministic value.
func (k *worker) buildValues() []Field {
	for i, name := range k.w.names {
		k.vals[i] = Field{Name: name, Value: k.fieldValue(i, name)}
	}
	return k.vals
}

// buildSingleValue fills one random field.
func (k *worker) buildSingleValue() []Field {
	i := int(k.w.fields.Next(k.r))
	k.vals[0] = Field{Name: k.w.names[i], Value: k.fieldValue(0, k.w.names[i])}
	return k.vals[:1]
}

func (k *worker) fieldValue(slot int, name string) []byte {
	v := k.value(slot)
	if k.cfg.DataIntegrity {
		return appendDeterministic(v, k.key, name, k.cfg.FieldLength)
	}
	v = v[:k.w.fieldLen.Next(k.r)]
	fillRandom(k.r, v)
	return v
}

// read is a measured DB read (DBWrapper.read). With dataintegrity it
// verifies what came back; data that does not verify turns a successful
// read into ERROR.
func (k *worker) read(fields []string) Status {
	ist, st := k.startTimes()
	s := k.db.Read(k.ctx, k.cfg.Table, k.key, fields, &k.readOut)
	en := k.now()
	k.st.note(s, en)
	if k.cfg.DataIntegrity {
		if v := k.verifyRow(k.key, k.readOut, s, len(fields)); v != StatusOK && s.OK() {
			s = StatusError
		}
	}
	k.st.measure(opRead, s, ist, st, en)
	k.st.report(opRead, s)
	return s
}

func (k *worker) update(vals []Field) Status {
	ist, st := k.startTimes()
	s := k.db.Update(k.ctx, k.cfg.Table, k.key, vals)
	en := k.now()
	k.st.note(s, en)
	k.st.measure(opUpdate, s, ist, st, en)
	k.st.report(opUpdate, s)
	return s
}

func (k *worker) insert(vals []Field) Status {
	ist, st := k.startTimes()
	s := k.db.Insert(k.ctx, k.cfg.Table, k.key, vals)
	en := k.now()
	k.st.note(s, en)
	k.st.measure(opInsert, s, ist, st, en)
	k.st.report(opInsert, s)
	return s
}

func (k *worker) txRead() {
	k.setKey(k.nextKeynum())
	k.read(k.readFields())
}

func (k *worker) txUpdate() {
	k.setKey(k.nextKeynum())
	if k.cfg.WriteAllFields {
		k.update(k.buildValues())
	} else {
		k.update(k.buildSingleValue())
	}
}

// txInsert inserts the next new key and acknowledges it, whatever the
// outcome, so that reads may pick it. An overflowing acknowledgement window
// ends the run.
func (k *worker) txInsert() error {
	keynum := k.w.insertSeq.Next()
	k.setKey(keynum)
	k.insert(k.buildValues())
	return k.w.insertSeq.Acknowledge(keynum)
}

func (k *worker) txScan() {
	k.setKey(k.nextKeynum())
	n := int(k.w.scanLen.Next(k.r))
	var fields []string
	if !k.cfg.ReadAllFields {
		k.one[0] = k.w.names[k.w.fields.Next(k.r)]
		fields = k.one[:]
	}
	ist, st := k.startTimes()
	s := k.db.Scan(k.ctx, k.cfg.Table, k.key, n, fields, &k.scanOut)
	en := k.now()
	k.st.note(s, en)
	if k.cfg.DataIntegrity && s.OK() {
		want := len(fields)
		if fields == nil {
			want = k.cfg.FieldCount
		}
		for _, rec := range k.scanOut {
			if k.verifyRow(rec.Key, rec.Fields, StatusOK, want) != StatusOK {
				s = StatusError
			}
		}
	}
	k.st.measure(opScan, s, ist, st, en)
	k.st.report(opScan, s)
}

// txReadModifyWrite reads a record and writes it back with new values; the
// READ and UPDATE are measured as such and the whole as READ-MODIFY-WRITE.
func (k *worker) txReadModifyWrite() {
	k.setKey(k.nextKeynum())
	var fields []string
	if !k.cfg.ReadAllFields {
		k.one[0] = k.w.names[k.w.fields.Next(k.r)]
		fields = k.one[:]
	} else if k.cfg.DataIntegrity {
		fields = k.w.names
	}
	vals := k.vals[:0]
	if k.cfg.WriteAllFields {
		vals = k.buildValues()
	} else {
		vals = k.buildSingleValue()
	}
	ist, st := k.startTimes()
	s := k.read(fields)
	if s.OK() {
		s = k.update(vals)
	}
	k.st.measureAlways(opRMW, ist, st, k.now())
	k.st.report(opRMW, s)
}

// verifyRow is CoreWorkload.verifyRow: each returned field must equal its
// deterministic value, and (stricter than YCSB) all wanted fields must be
// there. It is measured as VERIFY with status OK, UNEXPECTED_STATE (wrong
// data) or ERROR (no data), and counted in the integrity totals. A failure
// is logged with the field that differs (see verifyCells).
func (k *worker) verifyRow(key []byte, cells []Field, readStatus Status, want int) Status {
	st := k.now()
	var v Status
	var why string
	v, why, k.verBuf = verifyCells(key, cells, want, k.cfg.FieldLength, k.verBuf)
	en := k.now()
	k.st.measureActual(opVerify, st, en)
	k.st.report(opVerify, v)
	k.st.checked++
	if v != StatusOK {
		k.st.mismatch++
		k.log.printf("data integrity: record %s: %s (read returned %s, %d fields): %s", key, v, readStatus, len(cells), why)
	}
	return v
}

// shownBytes is how much of a field's expected and found values a
// data-integrity message shows.
const shownBytes = 24

// verifyCells checks cells, the fields read for key, against their
// deterministic values of length fieldLength (want > 0: that many fields
// are expected). It returns the status, a sentence saying what differs
// (e.g. `field field9 differs: expected "..." found "..."`, values cut to
// shownBytes), and buf for reuse.
func verifyCells(key []byte, cells []Field, want, fieldLength int, buf []byte) (Status, string, []byte) {
	switch {
	case len(cells) == 0:
		return StatusError, "no fields came back", buf
	case want > 0 && len(cells) != want:
		return StatusUnexpectedState, fmt.Sprintf("%d fields came back, want %d", len(cells), want), buf
	}
	for _, c := range cells {
		buf = appendDeterministic(buf[:0], key, c.Name, fieldLength)
		if !bytes.Equal(buf, c.Value) {
			return StatusUnexpectedState, fmt.Sprintf("field %s differs: expected %s found %s (was every earlier run on this data set run with dataintegrity=true?)",
				c.Name, cut(buf), cut(c.Value)), buf
		}
	}
	return StatusOK, "", buf
}

// cut shows b Go-quoted, its first shownBytes bytes and its length when
// longer.
func cut(b []byte) string {
	if len(b) <= shownBytes {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%q... (%d bytes)", b[:shownBytes], len(b))
}
