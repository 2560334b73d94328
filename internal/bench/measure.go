package bench

import (
	"sync/atomic"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// opKind indexes the measured operations.
type opKind uint8

const (
	opRead opKind = iota
	opUpdate
	opInsert
	opScan
	opRMW
	opDelete
	opCleanup
	opVerify
	numOps
)

var opNames = [numOps]string{"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE", "CLEANUP", "VERIFY"}

// histMaxUs is the largest latency a histogram holds, one hour in
// microseconds; longer ones are recorded as one hour. Three significant
// digits, like YCSB's Recorder(3).
const histMaxUs = 3_600_000_000

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMaxUs, 3) }

func record(h **hdrhistogram.Histogram, us int64) {
	if *h == nil {
		*h = newHist()
	}
	_ = (*h).RecordValue(min(max(us, 0), histMaxUs))
}

// threadStats is one client goroutine's measurements. Only that goroutine
// writes it while the run is going; the monitor reads only done (an
// atomic). Merging happens after the goroutine has ended.
type threadStats struct {
	mode MeasureMode
	// lat[op][0] holds latencies of successes, lat[op][1] of failures (YCSB's
	// "OP-FAILED"); intended[op] the same measured from the intended start.
	lat      [numOps][2]*hdrhistogram.Histogram
	intended [numOps][2]*hdrhistogram.Histogram
	returns  [numOps][numStatus]int64
	checked  int64 // dataintegrity: records verified
	mismatch int64 // dataintegrity: records that did not verify

	_    [64]byte // keep done, answered and failed on their own cache line
	done atomic.Int64
	// answered and failed are when (ns since the epoch) the thread's last
	// operation with an answer (a success or NOT_FOUND), and its last one
	// without, ended: the monitor gives up on a store that stopped
	// answering (cairn.giveup).
	answered atomic.Int64
	failed   atomic.Int64
	_        [40]byte
}

// measure is YCSB's DBWrapper.measure: a latency from st (and, unless the
// mode is op, from the intended start ist) to en, all in nanoseconds, under
// the operation's name, or its -FAILED twin when status is not a success.
func (t *threadStats) measure(op opKind, s Status, ist, st, en int64) {
	f := 0
	if !s.OK() {
		f = 1
	}
	record(&t.lat[op][f], (en-st)/1000)
	if t.mode != MeasureOp {
		record(&t.intended[op][f], (en-ist)/1000)
	}
}

// note records when an operation that ended at en (ns since the epoch)
// returned s from the DB: an answer (a success or NOT_FOUND) or not.
// Reads pass the DB's status before data integrity checks change it: data
// that does not verify still came from the store.
func (t *threadStats) note(s Status, en int64) {
	if s.OK() || s == StatusNotFound {
		t.answered.Store(en)
	} else {
		t.failed.Store(en)
	}
}

// measureAlways records under the operation's own name whatever the status,
// as YCSB does for READ-MODIFY-WRITE.
func (t *threadStats) measureAlways(op opKind, ist, st, en int64) {
	record(&t.lat[op][0], (en-st)/1000)
	if t.mode != MeasureOp {
		record(&t.intended[op][0], (en-ist)/1000)
	}
}

// measureActual records under the operation's own name, from the actual
// start only, as YCSB measures VERIFY.
func (t *threadStats) measureActual(op opKind, st, en int64) {
	record(&t.lat[op][0], (en-st)/1000)
}

// report counts a return code (YCSB's reportStatus).
func (t *threadStats) report(op opKind, s Status) { t.returns[op][s]++ }

// stats are all threads' measurements merged.
type stats struct {
	mode     MeasureMode
	lat      [numOps][2]*hdrhistogram.Histogram
	intended [numOps][2]*hdrhistogram.Histogram
	returns  [numOps][numStatus]int64
	checked  int64
	mismatch int64
}

func mergeStats(mode MeasureMode, ts []*threadStats) *stats {
	s := &stats{mode: mode}
	merge := func(dst **hdrhistogram.Histogram, src *hdrhistogram.Histogram) {
		if src == nil {
			return
		}
		if *dst == nil {
			*dst = newHist()
		}
		(*dst).Merge(src)
	}
	for _, t := range ts {
		for op := range numOps {
			for f := range 2 {
				merge(&s.lat[op][f], t.lat[op][f])
				merge(&s.intended[op][f], t.intended[op][f])
			}
			for st := range numStatus {
				s.returns[op][st] += t.returns[op][st]
			}
		}
		s.checked += t.checked
		s.mismatch += t.mismatch
	}
	return s
}

func (s *stats) returnsOf(op opKind) []StatusCount {
	var out []StatusCount
	for st := range numStatus {
		if n := s.returns[op][st]; n > 0 {
			out = append(out, StatusCount{Status: Status(st).String(), Count: n})
		}
	}
	return out
}

// measurements lays the merged stats out as YCSB's Measurements would
// export them: the measurements of latency from the actual start (OP and
// OP-FAILED, return codes under OP), then, with measurement.interval=both,
// those from the intended start as Intended-OP. With
// measurement.interval=intended only the latter are printed, under the
// plain names, with the return codes.
func (s *stats) measurements() []Measurement {
	var out []Measurement
	add := func(prefix string, hs *[numOps][2]*hdrhistogram.Histogram, withReturns bool) {
		for op := range numOps {
			var rets []StatusCount
			if withReturns {
				rets = s.returnsOf(op)
			}
			if hs[op][0] != nil || len(rets) > 0 {
				out = append(out, Measurement{Name: prefix + opNames[op], Hist: hs[op][0], Returns: rets})
			}
			if hs[op][1] != nil {
				out = append(out, Measurement{Name: prefix + opNames[op] + "-FAILED", Hist: hs[op][1]})
			}
		}
	}
	switch s.mode {
	case MeasureOp:
		add("", &s.lat, true)
	case MeasureBoth:
		add("", &s.lat, true)
		add("Intended-", &s.intended, false)
	case MeasureIntended:
		// VERIFY is measured from the actual start only, as in YCSB.
		in := s.intended
		in[opVerify] = [2]*hdrhistogram.Histogram{}
		add("", &in, true)
	}
	return out
}
