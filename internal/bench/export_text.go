package bench

import (
	"bufio"
	"io"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Measurement is one named latency histogram with the return codes counted
// under its name, as YCSB's OneMeasurement: "READ", "READ-FAILED",
// "Intended-READ", "CLEANUP", "VERIFY".
type Measurement struct {
	Name string
	// Hist holds latencies in microseconds; nil means none were recorded.
	Hist *hdrhistogram.Histogram
	// Returns are the "Return=" lines, in order; only non-zero counts.
	Returns []StatusCount
}

// StatusCount is how many operations ended with a status.
type StatusCount struct {
	Status string
	Count  int64
}

// Summary is everything the text exporter prints.
type Summary struct {
	RuntimeMs  int64
	Operations int64
	GCCount    int64 // garbage collections during the run
	GCPauseMs  int64 // their stop-the-world time
	// Measurements in print order.
	Measurements []Measurement
	// Percentiles to print per measurement (hdrhistogram.percentiles).
	Percentiles []float64
}

// WriteText prints s in the format of YCSB's TextMeasurementsExporter, one
// "[METRIC], Measurement, value" line each, so that scripts written for
// YCSB read it unchanged:
//
//	[OVERALL], RunTime(ms), 10110
//	[OVERALL], Throughput(ops/sec), 98.91196834817013
//	[TOTAL_GCs], Count, 1
//	[TOTAL_GC_TIME], Time(ms), 0
//	[TOTAL_GC_TIME_%], Time(%), 0.0
//	[READ], Operations, 505
//	[READ], AverageLatency(us), 412.3
//	[READ], MinLatency(us), 128
//	[READ], MaxLatency(us), 9015
//	[READ], 95thPercentileLatency(us), 802
//	[READ], 99thPercentileLatency(us), 2113
//	[READ], Return=OK, 505
//
// Doubles are printed as Java prints them (see javaDouble). Go has one
// collector, so there are no per-collector TOTAL_GCS_<name> lines; the GC
// time is the stop-the-world pause time.
func WriteText(w io.Writer, s *Summary) error {
	bw := bufio.NewWriter(w)
	line := func(metric, measurement, value string) {
		bw.WriteString("[")
		bw.WriteString(metric)
		bw.WriteString("], ")
		bw.WriteString(measurement)
		bw.WriteString(", ")
		bw.WriteString(value)
		bw.WriteString("\n")
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	line("OVERALL", "RunTime(ms)", i64(s.RuntimeMs))
	line("OVERALL", "Throughput(ops/sec)", javaDouble(1000*float64(s.Operations)/float64(s.RuntimeMs)))
	line("TOTAL_GCs", "Count", i64(s.GCCount))
	line("TOTAL_GC_TIME", "Time(ms)", i64(s.GCPauseMs))
	line("TOTAL_GC_TIME_%", "Time(%)", javaDouble(float64(s.GCPauseMs)/float64(s.RuntimeMs)*100))
	for _, m := range s.Measurements {
		h := m.Hist
		if h == nil {
			h = newHist()
		}
		line(m.Name, "Operations", i64(h.TotalCount()))
		line(m.Name, "AverageLatency(us)", javaDouble(javaMean(h)))
		line(m.Name, "MinLatency(us)", i64(h.Min()))
		line(m.Name, "MaxLatency(us)", i64(h.Max()))
		for _, p := range s.Percentiles {
			line(m.Name, ordinal(p)+"PercentileLatency(us)", i64(h.ValueAtPercentile(p)))
		}
		for _, r := range m.Returns {
			line(m.Name, "Return="+r.Status, i64(r.Count))
		}
	}
	return bw.Flush()
}

// javaMean is the histogram mean as Java's HdrHistogram computes it: the sum
// of each bucket's median equivalent value times its count, divided once by
// the total (the Go library divides per bucket, which differs in the last
// digits). It is 0 for an empty histogram.
func javaMean(h *hdrhistogram.Histogram) float64 {
	if h.TotalCount() == 0 {
		return 0
	}
	var total float64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		median := b.From + (b.To-b.From+1)>>1
		total += float64(median) * float64(b.Count)
	}
	return total / float64(h.TotalCount())
}
