package bench

import (
	"bufio"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cairndb/cairn/internal/bench/result"
)

// buildResult makes the result document (exportfile) of a finished phase.
// Its ops are the same measurements the text summary prints under the
// actual-start names (READ, READ-FAILED, ..., CLEANUP, VERIFY): Count is the
// number of latencies recorded (YCSB's "Operations"), Returns the return
// codes counted under the name, and Intended, when intended latencies were
// measured, the same operations timed from their intended start.
func buildResult(cfg *Config, version string, started time.Time, threads int, sum *Summary, st *stats, series []result.Sample) (*result.Run, error) {
	r := &result.Run{
		Format: result.Format, CairnVersion: version, Phase: cfg.Phase.String(), DB: cfg.DB,
		Workload: cfg.Workload, Started: started, RuntimeMs: sum.RuntimeMs, Operations: sum.Operations,
		Threads: threads, TargetOpsSec: float64(cfg.Target), Properties: cfg.Properties,
		Machine: machineFacts(), Series: series,
	}
	if sum.RuntimeMs > 0 {
		r.ThroughputOpsSec = 1000 * float64(sum.Operations) / float64(sum.RuntimeMs)
	}
	if r.Series == nil {
		r.Series = []result.Sample{}
	}
	r.Ops = []result.Op{}
	for op := range numOps {
		for f := range 2 {
			lat, in := st.lat[op][f], st.intended[op][f]
			var rets map[string]int64
			if f == 0 {
				rets = map[string]int64{}
				for _, sc := range st.returnsOf(op) {
					rets[sc.Status] = sc.Count
				}
			}
			if lat == nil && in == nil && len(rets) == 0 {
				continue
			}
			name := opNames[op]
			if f == 1 {
				name += "-FAILED"
				rets = map[string]int64{}
			}
			o := result.Op{Name: name, Returns: rets}
			var err error
			if o.Latency, err = summarize(lat); err != nil {
				return nil, err
			}
			o.Count = o.Latency.Count
			if cfg.Measure != MeasureOp && in != nil {
				l, err := summarize(in)
				if err != nil {
					return nil, err
				}
				o.Intended = &l
			}
			r.Ops = append(r.Ops, o)
		}
	}
	if cfg.DataIntegrity {
		r.Integrity = &result.Integrity{Checked: st.checked, Mismatches: st.mismatch}
	}
	if math.IsNaN(r.ThroughputOpsSec) || math.IsInf(r.ThroughputOpsSec, 0) {
		r.ThroughputOpsSec = 0
	}
	return r, nil
}

func summarize(h *hdrhistogram.Histogram) (result.Latency, error) {
	if h == nil {
		h = newHist()
	}
	return result.Summarize(h)
}

// machineFacts describes this machine; facts that cannot be read are left
// empty.
func machineFacts() result.Machine {
	host, _ := os.Hostname()
	return result.Machine{
		Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		CPUModel: procField("/proc/cpuinfo", "model name"), MemBytes: memTotal(), GoVersion: runtime.Version(),
	}
}

// procField returns the value of the first "name : value" line of a /proc
// file, or "".
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// memTotal returns MemTotal from /proc/meminfo in bytes, or 0.
func memTotal() int64 {
	v := procField("/proc/meminfo", "MemTotal") // "16318072 kB"
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, "kB")), 10, 64)
	if err != nil {
		return 0
	}
	return n * 1024
}
