package bench

import (
	"fmt"

	"github.com/cairndb/cairn/internal/bench/dist"
)

// generator is a distribution drawn with the caller's Rand.
type generator interface {
	Next(r *dist.Rand) int64
}

// Workload is YCSB's CoreWorkload for one phase: the generators shared by
// all client goroutines and a factory for the per-goroutine ones. Build it
// with NewWorkload before the goroutines start.
type Workload struct {
	cfg   *Config
	names []string // field names, fieldnameprefix0..

	keySeq    *dist.Counter             // load: the next key number to insert
	insertSeq *dist.AcknowledgedCounter // run: keys inserted; Last bounds reads

	ops      *dist.Discrete // run: the operation mix
	opKinds  []opKind       // outcome index of ops -> operation
	keys     generator      // run: shared key chooser (nil for latest)
	latest   float64        // run, latest: zeta of the initial key count
	exp      *dist.Exponential
	fields   *dist.Uniform // field chooser, [0, fieldcount-1]
	fieldLen generator
	scanLen  generator
}

// NewWorkload builds the shared generators, as CoreWorkload.init. For
// latest it computes one zeta over recordcount keys (O(recordcount)).
func NewWorkload(cfg *Config) (*Workload, error) {
	w := &Workload{cfg: cfg, names: cfg.FieldNames()}
	w.keySeq = dist.NewCounter(cfg.InsertStart)
	w.fields = dist.NewUniform(0, int64(cfg.FieldCount)-1)
	switch cfg.FieldLengthDist {
	case "constant":
		w.fieldLen = dist.Constant(cfg.FieldLength)
	case "uniform":
		w.fieldLen = dist.NewUniform(int64(cfg.MinFieldLength), int64(cfg.FieldLength))
	case "zipfian":
		w.fieldLen = dist.NewZipfian(int64(cfg.MinFieldLength), int64(cfg.FieldLength))
	}
	if cfg.Phase == PhaseLoad {
		return w, nil
	}

	weights := []float64{cfg.ReadProportion, cfg.UpdateProportion, cfg.InsertProportion, cfg.ScanProportion, cfg.RMWProportion}
	w.opKinds = []opKind{opRead, opUpdate, opInsert, opScan, opRMW}
	w.ops = dist.NewDiscrete(weights)
	w.insertSeq = dist.NewAcknowledgedCounter(cfg.RecordCount)
	lo, hi := cfg.InsertStart, cfg.InsertStart+cfg.InsertCount-1
	switch cfg.RequestDist {
	case "uniform":
		w.keys = dist.NewUniform(lo, hi)
	case "exponential":
		w.exp = dist.NewExponential(cfg.ExponentialPercentile, float64(cfg.RecordCount)*cfg.ExponentialFrac)
	case "sequential":
		w.keys = dist.NewSequential(lo, hi)
	case "zipfian":
		// Size the key space for the inserts the run will make (twice the
		// expected count, YCSB's fudge factor) so that the hot keys do not
		// move as records are added; draws beyond the last insert are
		// redrawn. YCSB passes insertstart+insertcount+expected as the
		// maximum, one key more than loaded; kept.
		expected := int64(float64(cfg.OperationCount) * cfg.InsertProportion * 2)
		w.keys = dist.NewScrambledZipfian(cfg.InsertStart, cfg.InsertStart+cfg.InsertCount+expected)
	case "latest":
		w.latest = dist.Zeta(w.insertSeq.Last(), dist.ZipfianConstant)
	case "hotspot":
		h, err := dist.NewHotspot(lo, hi, cfg.HotspotDataFraction, cfg.HotspotOpnFraction)
		if err != nil {
			return nil, &UsageError{msg: fmt.Sprintf("bench: requestdistribution=hotspot: %v", err)}
		}
		w.keys = h
	}
	switch cfg.ScanLengthDist {
	case "uniform":
		w.scanLen = dist.NewUniform(int64(cfg.MinScanLength), int64(cfg.MaxScanLength))
	case "zipfian":
		w.scanLen = dist.NewZipfian(int64(cfg.MinScanLength), int64(cfg.MaxScanLength))
	}
	return w, nil
}

// keyChooser returns the key chooser of one goroutine: the shared one, or
// for latest a SkewedLatest of its own over the shared insert counter.
func (w *Workload) keyChooser() generator {
	if w.cfg.RequestDist == "latest" {
		return dist.NewSkewedLatest(w.insertSeq, w.latest)
	}
	return w.keys
}
