package bench

import (
	"math"
	"strconv"
	"strings"
)

// javaDouble formats f as Java's Double.toString does, which is how YCSB's
// text exporter prints every double: the shortest digits that read back as
// f, in plain notation with at least one fractional digit ("1000.0") for
// 1e-3 <= |f| < 1e7, and otherwise as d.dddE[-]n ("1.2345E7").
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. -1.2345e+07
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// javaLong converts f to an int64 as Java's (long) cast does: NaN is 0 and
// out-of-range values saturate.
func javaLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// decimal2 formats f as Java's DecimalFormat("#.##"): at most two
// fractional digits, rounded half-even, no trailing zeros or point.
func decimal2(f float64) string {
	switch {
	case math.IsNaN(f):
		return "\uFFFD"
	case math.IsInf(f, 1):
		return "\u221E"
	case math.IsInf(f, -1):
		return "-\u221E"
	}
	s := strconv.FormatFloat(f, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// ordinal names a percentile as YCSB's OneMeasurementHdrHistogram does for
// integers, with their English suffix (50th, 1st, 2nd, 3rd, 11th). YCSB
// prints a fraction bare ("99.9PercentileLatency(us)"); Cairn writes
// "99.9thPercentileLatency(us)", the name the issue tracker and most YCSB
// result parsers (which match "thPercentileLatency") expect.
func ordinal(p float64) string {
	if p != math.Trunc(p) {
		return javaDouble(p) + "th"
	}
	j := int64(p)
	switch j % 100 {
	case 11, 12, 13:
		return strconv.FormatInt(j, 10) + "th"
	}
	return strconv.FormatInt(j, 10) + [...]string{"th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th"}[j%10]
}
