package report

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// groupInt formats n with thousands separators: 1234567 -> "1,234,567".
func groupInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtRate formats a throughput or latency average: grouped whole numbers from
// 100 up, one decimal below (so small values keep their precision).
func fmtRate(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	if math.Abs(v) >= 100 {
		return groupInt(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// fmtBytes formats a size in binary units: "15.5 GiB".
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, i := float64(n), -1
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + string("KMGTP"[i]) + "iB"
}

// fmtDuration formats a run time in milliseconds: "34 ms", "42.1 s",
// "12 min 5 s", "2 h 3 min".
func fmtDuration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return strconv.FormatInt(ms, 10) + " ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min " + strconv.Itoa(int((d%time.Minute)/time.Second)) + " s"
	}
	return strconv.Itoa(int(d/time.Hour)) + " h " + strconv.Itoa(int((d%time.Hour)/time.Minute)) + " min"
}

// fmtTime formats a start time in UTC, to the second.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// orDash returns s, or an em dash for an empty s.
func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
