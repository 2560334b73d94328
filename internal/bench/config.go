package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MeasureMode is measurement.interval: what latency is measured from.
type MeasureMode int

// The measurement modes, as YCSB's measurement.interval.
const (
	MeasureOp       MeasureMode = iota // from the operation's actual start ("op")
	MeasureIntended                    // from its intended start under -target ("intended")
	MeasureBoth                        // both, the intended ones as Intended-OP ("both")
)

// Config is a validated benchmark configuration built from properties. Its
// fields are the properties' values with defaults applied; Properties keeps
// the full set in force, for the result document.
type Config struct {
	Phase    Phase
	Workload string // name for the result document
	DB       string // cairn, embedded or null

	Threads        int           // threadcount; default 1
	Target         int           // target, total ops/s; 0 for no throttling
	MaxExecution   time.Duration // maxexecutiontime (seconds); 0 for no limit
	Status         bool          // status (-s)
	StatusInterval time.Duration // status.interval (seconds); default 10s
	Label          string        // label (-l)
	ExportFile     string        // exportfile: JSON result path, or ""

	RecordCount    int64 // recordcount; required (>= 1)
	OperationCount int64 // operationcount; 0: unlimited
	InsertStart    int64 // insertstart; default 0
	InsertCount    int64 // insertcount; default RecordCount-InsertStart

	Measure     MeasureMode // measurement.interval
	Percentiles []float64   // hdrhistogram.percentiles

	Table                  string
	FieldCount             int
	FieldLength            int
	MinFieldLength         int
	FieldLengthDist        string // constant, uniform or zipfian
	FieldNamePrefix        string
	ReadAllFields          bool
	ReadAllFieldsByName    bool
	WriteAllFields         bool
	DataIntegrity          bool
	ReadProportion         float64
	UpdateProportion       float64
	InsertProportion       float64
	ScanProportion         float64
	RMWProportion          float64
	RequestDist            string // uniform, zipfian, latest, hotspot, sequential, exponential
	ZeroPadding            int
	MinScanLength          int
	MaxScanLength          int
	ScanLengthDist         string // uniform or zipfian
	OrderedInserts         bool   // insertorder=ordered
	HotspotDataFraction    float64
	HotspotOpnFraction     float64
	InsertionRetryLimit    int
	InsertionRetryInterval time.Duration
	ExponentialPercentile  float64
	ExponentialFrac        float64

	Cairn CairnConfig
	Seed  uint64 // cairn.seed

	// binding, when set (by tests), replaces the -db binding.
	binding Binding

	// Properties is every known property with the value in force (set or
	// default); computed defaults appear with their computed value.
	Properties map[string]string
}

// CairnConfig holds the cairn.* properties.
type CairnConfig struct {
	Hosts       []string      // cairn.hosts
	Store       string        // cairn.store
	Security    string        // cairn.security: a login file (TLS), or ""
	Root        string        // cairn.root (embedded)
	Partitions  uint32        // cairn.partitions (embedded, at creation)
	Durability  string        // cairn.durability: sync, write_no_sync, no_sync
	Consistency string        // cairn.consistency: absolute, none_required
	Layout      string        // cairn.layout: value or minor
	Update      string        // cairn.update: merge or rmw (value layout)
	Timeout     time.Duration // cairn.timeout
	GiveUp      time.Duration // cairn.giveup: 0 never
	Conns       int           // cairn.conns
	NodeConns   int           // cairn.nodeconns
	SpreadReads bool          // cairn.spreadreads
	UnaryCalls  bool          // cairn.unarycalls
	CallSocket  bool          // cairn.callsocket
	CPUProfile  string        // cairn.cpuprofile: file for a CPU profile of the run, or ""
}

// NewConfig checks the properties against the allow-list and builds a
// Config. Every problem found is reported, each naming its property and
// where it was set; the error is a *UsageError.
func NewConfig(phase Phase, workload string, p *Properties) (*Config, error) {
	c := &Config{Phase: phase, Workload: workload, Properties: map[string]string{}}
	r := &reader{p: p}
	var unknown []string
	for _, n := range p.Names() {
		if _, ok := knownIndex[n]; !ok {
			unknown = append(unknown, n)
		}
	}
	slices.Sort(unknown)
	for _, n := range unknown {
		msg := fmt.Sprintf("unknown property %q (%s)", n, p.Source(n))
		if s := suggest(n); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		r.errs = append(r.errs, errors.New(msg))
	}

	if w := r.str("workload"); w != "site.ycsb.workloads.CoreWorkload" && w != "com.yahoo.ycsb.workloads.CoreWorkload" {
		r.failf("workload", "only the core workload (site.ycsb.workloads.CoreWorkload) is implemented")
	}
	c.DB = r.oneOf("db", "cairn", "embedded", "null")
	c.Threads = r.intMin("threadcount", 1)
	c.Target = r.intMin("target", 0)
	c.MaxExecution = time.Duration(r.intMin("maxexecutiontime", 0)) * time.Second
	c.Status = r.bool("status")
	c.StatusInterval = time.Duration(r.intMin("status.interval", 1)) * time.Second
	c.Label = r.str("label")
	c.ExportFile = r.str("exportfile")

	c.RecordCount = r.int64Min("recordcount", 0)
	if c.RecordCount == 0 && r.ok("recordcount") {
		r.failf("recordcount", "is 0 or unset; set it to the number of records (YCSB would silently use 2^31-1)")
	}
	c.OperationCount = r.int64Min("operationcount", 0)
	c.InsertStart = r.int64Min("insertstart", 0)
	c.InsertCount = c.RecordCount - c.InsertStart
	if _, set := p.Get("insertcount"); set {
		c.InsertCount = r.int64Min("insertcount", 0)
	}
	if r.ok("recordcount", "insertstart", "insertcount") && c.RecordCount < c.InsertStart+c.InsertCount {
		r.failf("insertcount", "insertstart %d + insertcount %d is beyond recordcount %d", c.InsertStart, c.InsertCount, c.RecordCount)
	}
	if r.ok("recordcount", "insertstart", "insertcount") && c.InsertCount <= 0 {
		// YCSB would take 0 as "no limit" and insert without end.
		r.failf("insertcount", "leaves this client no records: insertstart %d, recordcount %d; set recordcount to insertstart plus the records to insert (recordcount is the total over all clients)", c.InsertStart, c.RecordCount)
	}

	if r.str("measurementtype") != "hdrhistogram" {
		r.failf("measurementtype", "only hdrhistogram is implemented")
	}
	switch mi, set := p.Get("measurement.interval"); {
	case !set && c.Target > 0:
		c.Measure = MeasureBoth
	case !set:
		c.Measure = MeasureOp
	default:
		switch strings.TrimSpace(mi) {
		case "op":
			c.Measure = MeasureOp
		case "intended":
			c.Measure = MeasureIntended
		case "both":
			c.Measure = MeasureBoth
		default:
			r.failf("measurement.interval", "want op, intended or both")
		}
	}
	c.Percentiles = r.percentiles("hdrhistogram.percentiles")

	c.Table = r.str("table")
	if c.Table == "" {
		r.failf("table", "is empty")
	}
	c.FieldCount = r.intMin("fieldcount", 1)
	c.FieldLength = r.intMin("fieldlength", 1)
	c.MinFieldLength = r.intMin("minfieldlength", 1)
	c.FieldLengthDist = r.oneOf("fieldlengthdistribution", "constant", "uniform", "zipfian")
	if c.FieldLengthDist != "constant" && r.ok("minfieldlength", "fieldlength") && c.MinFieldLength > c.FieldLength {
		r.failf("minfieldlength", "%d is above fieldlength %d", c.MinFieldLength, c.FieldLength)
	}
	c.FieldNamePrefix = r.str("fieldnameprefix")
	c.ReadAllFields = r.bool("readallfields")
	c.ReadAllFieldsByName = r.bool("readallfieldsbyname")
	c.WriteAllFields = r.bool("writeallfields")
	c.DataIntegrity = r.bool("dataintegrity")
	if c.DataIntegrity && c.FieldLengthDist != "constant" {
		r.failf("dataintegrity", "needs fieldlengthdistribution=constant (values are rebuilt from the key to verify them)")
	}

	c.ReadProportion = r.proportion("readproportion")
	c.UpdateProportion = r.proportion("updateproportion")
	c.InsertProportion = r.proportion("insertproportion")
	c.ScanProportion = r.proportion("scanproportion")
	c.RMWProportion = r.proportion("readmodifywriteproportion")
	if r.ok("readproportion", "updateproportion", "insertproportion", "scanproportion", "readmodifywriteproportion") {
		sum := c.ReadProportion + c.UpdateProportion + c.InsertProportion + c.ScanProportion + c.RMWProportion
		if math.Abs(sum-1) > 1e-9 {
			var parts []string
			for _, n := range []string{"readproportion", "updateproportion", "insertproportion", "scanproportion", "readmodifywriteproportion"} {
				v, _ := r.value(n)
				parts = append(parts, fmt.Sprintf("%s=%s (%s)", n, v, p.Source(n)))
			}
			r.errs = append(r.errs, fmt.Errorf("operation proportions sum to %v, not 1: %s", sum, strings.Join(parts, ", ")))
		}
	}

	c.RequestDist = r.oneOf("requestdistribution", "uniform", "zipfian", "latest", "hotspot", "sequential", "exponential")
	c.ZeroPadding = r.intMin("zeropadding", 0)
	c.MinScanLength = r.intMin("minscanlength", 1)
	c.MaxScanLength = r.intMin("maxscanlength", 1)
	if r.ok("minscanlength", "maxscanlength") && c.MinScanLength > c.MaxScanLength {
		r.failf("minscanlength", "%d is above maxscanlength %d", c.MinScanLength, c.MaxScanLength)
	}
	c.ScanLengthDist = r.oneOf("scanlengthdistribution", "uniform", "zipfian")
	c.OrderedInserts = r.oneOf("insertorder", "hashed", "ordered") == "ordered"
	c.HotspotDataFraction = r.fraction("hotspotdatafraction")
	c.HotspotOpnFraction = r.fraction("hotspotopnfraction")
	c.InsertionRetryLimit = r.intMin("core_workload_insertion_retry_limit", 0)
	c.InsertionRetryInterval = time.Duration(r.intMin("core_workload_insertion_retry_interval", 0)) * time.Second
	c.ExponentialPercentile = r.float("exponential.percentile")
	if r.ok("exponential.percentile") && !(c.ExponentialPercentile > 0 && c.ExponentialPercentile < 100) {
		r.failf("exponential.percentile", "want a percentage strictly between 0 and 100")
	}
	c.ExponentialFrac = r.float("exponential.frac")
	if r.ok("exponential.frac") && !(c.ExponentialFrac > 0) {
		r.failf("exponential.frac", "want a positive fraction")
	}

	c.Cairn.Hosts = strings.Split(r.str("cairn.hosts"), ",")
	for i, h := range c.Cairn.Hosts {
		c.Cairn.Hosts[i] = strings.TrimSpace(h)
		if c.Cairn.Hosts[i] == "" {
			r.failf("cairn.hosts", "has an empty host")
		}
	}
	c.Cairn.Store = r.str("cairn.store")
	c.Cairn.Security = r.str("cairn.security")
	c.Cairn.Root = r.str("cairn.root")
	if c.DB == "embedded" && c.Cairn.Root == "" {
		r.failf("cairn.root", "is required with -db embedded (the store's directory)")
	}
	c.Cairn.Partitions = uint32(r.intMin("cairn.partitions", 1))
	c.Cairn.Durability = r.oneOf("cairn.durability", "sync", "write_no_sync", "no_sync")
	c.Cairn.Consistency = r.oneOf("cairn.consistency", "absolute", "none_required")
	c.Cairn.Layout = r.oneOf("cairn.layout", "value", "minor")
	c.Cairn.Update = r.oneOf("cairn.update", "merge", "rmw")
	c.Cairn.Timeout = r.duration("cairn.timeout")
	c.Cairn.GiveUp = r.durationOrZero("cairn.giveup")
	c.Cairn.Conns = r.intMin("cairn.conns", 1)
	c.Cairn.NodeConns = r.intMin("cairn.nodeconns", 1)
	c.Cairn.SpreadReads = r.bool("cairn.spreadreads")
	c.Cairn.UnaryCalls = r.bool("cairn.unarycalls")
	c.Cairn.CallSocket = r.bool("cairn.callsocket")
	c.Cairn.CPUProfile = r.str("cairn.cpuprofile")
	c.Seed = r.uint64("cairn.seed")

	if err := errors.Join(r.errs...); err != nil {
		return nil, &UsageError{msg: "bench: " + strings.ReplaceAll(err.Error(), "\n", "\n  ")}
	}
	for _, kp := range knownProps {
		if !kp.appliesTo(c.DB) {
			continue // e.g. cairn.partitions of -db embedded in a -db cairn run's export
		}
		if v, ok := p.Get(kp.name); ok {
			c.Properties[kp.name] = v
		} else if kp.def != "" {
			c.Properties[kp.name] = kp.def
		}
	}
	c.Properties["insertcount"] = strconv.FormatInt(c.InsertCount, 10)
	c.Properties["measurement.interval"] = [...]string{"op", "intended", "both"}[c.Measure]
	return c, nil
}

// FieldNames returns the record's field names: prefix0, prefix1, ...
func (c *Config) FieldNames() []string {
	names := make([]string, c.FieldCount)
	for i := range names {
		names[i] = c.FieldNamePrefix + strconv.Itoa(i)
	}
	return names
}

// reader reads typed properties, collecting one error per bad property.
type reader struct {
	p    *Properties
	errs []error
	bad  map[string]bool
}

func (r *reader) value(name string) (string, bool) {
	if v, ok := r.p.Get(name); ok {
		return strings.TrimSpace(v), true
	}
	return knownDefault(name), false
}

func (r *reader) failf(name, format string, args ...any) {
	v, _ := r.value(name)
	if r.bad == nil {
		r.bad = map[string]bool{}
	}
	r.bad[name] = true
	r.errs = append(r.errs, fmt.Errorf("%s=%s (%s): %s", name, v, r.p.Source(name), fmt.Sprintf(format, args...)))
}

// ok reports whether none of the named properties has failed to parse, so
// checks across properties do not pile up on one bad value.
func (r *reader) ok(names ...string) bool {
	for _, n := range names {
		if r.bad[n] {
			return false
		}
	}
	return true
}

func (r *reader) str(name string) string {
	v, _ := r.value(name)
	return v
}

func (r *reader) oneOf(name string, allowed ...string) string {
	v := strings.ToLower(r.str(name)) // ABSOLUTE works, as in Oracle's binding
	if !slices.Contains(allowed, v) {
		r.failf(name, "want one of %s", strings.Join(allowed, ", "))
		return allowed[0]
	}
	return v
}

func (r *reader) bool(name string) bool {
	switch strings.ToLower(r.str(name)) {
	case "true":
		return true
	case "false":
		return false
	}
	r.failf(name, "want true or false")
	return false
}

func (r *reader) int64Min(name string, lo int64) int64 {
	n, err := strconv.ParseInt(r.str(name), 10, 64)
	if err != nil {
		r.failf(name, "not an integer")
		return lo
	}
	if n < lo {
		r.failf(name, "must be at least %d", lo)
		return lo
	}
	return n
}

func (r *reader) intMin(name string, lo int) int {
	n := r.int64Min(name, int64(lo))
	if n > math.MaxInt32 {
		r.failf(name, "is too large")
		return lo
	}
	return int(n)
}

func (r *reader) uint64(name string) uint64 {
	n, err := strconv.ParseUint(r.str(name), 10, 64)
	if err != nil {
		r.failf(name, "not a non-negative integer")
	}
	return n
}

func (r *reader) float(name string) float64 {
	f, err := strconv.ParseFloat(r.str(name), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		r.failf(name, "not a number")
		return 0
	}
	return f
}

func (r *reader) proportion(name string) float64 {
	f := r.float(name)
	if r.ok(name) && f < 0 {
		r.failf(name, "is negative")
		return 0
	}
	return f
}

func (r *reader) fraction(name string) float64 {
	f := r.float(name)
	if r.ok(name) && (f < 0 || f > 1) {
		r.failf(name, "want a fraction between 0 and 1")
	}
	return f
}

func (r *reader) duration(name string) time.Duration {
	d, err := time.ParseDuration(r.str(name))
	if err != nil || d <= 0 {
		r.failf(name, "want a positive Go duration such as 5s or 250ms")
		return time.Second
	}
	return d
}

// durationOrZero is duration, with 0 allowed (for "never").
func (r *reader) durationOrZero(name string) time.Duration {
	d, err := time.ParseDuration(r.str(name))
	if err != nil || d < 0 {
		r.failf(name, "want 0 (never) or a positive Go duration such as 30s or 2m")
		return 0
	}
	return d
}

func (r *reader) percentiles(name string) []float64 {
	var out []float64
	for _, s := range strings.Split(r.str(name), ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(f > 0 && f <= 100) {
			r.failf(name, "want comma-separated percentiles in (0, 100]")
			return []float64{50, 95, 99}
		}
		out = append(out, f)
	}
	return out
}
