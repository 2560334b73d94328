package bench

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// statusLine is one status report of a run in progress.
type statusLine struct {
	label      string
	wall       time.Time // when, for the timestamp
	elapsedMs  int64     // since the start of the run
	ops        int64     // operations done so far
	todo       int64     // operations left (0: unknown or none)
	intervalMs int64     // length of the interval since the last report
	intervalOp int64     // operations done in it
	progress   float64   // fraction done for the bar; < 0 for none
	bar        bool      // append a progress bar (stderr is a terminal)
}

// format renders the line as YCSB's StatusThread does,
//
//	2026-01-02 15:04:05:123 10 sec: 81234 operations; 8123.4 current ops/sec; est completion in 2 minutes
//
// so that tools that follow YCSB's status output keep working; the
// per-operation latency summaries YCSB appends are left out (they would
// need locks on the hot path), and so is the current rate when no time
// has passed since the previous line. On a terminal a progress bar follows.
func (s statusLine) format() string {
	var b strings.Builder
	b.WriteString(s.label)
	b.WriteString(s.wall.Format("2006-01-02 15:04:05"))
	ms := s.wall.Nanosecond() / int(time.Millisecond)
	b.WriteString(":" + strconv.Itoa(ms/100) + strconv.Itoa(ms/10%10) + strconv.Itoa(ms%10))
	b.WriteString(" ")
	b.WriteString(strconv.FormatInt(s.elapsedMs/1000, 10))
	b.WriteString(" sec: ")
	b.WriteString(strconv.FormatInt(s.ops, 10))
	b.WriteString(" operations; ")
	if s.ops != 0 && s.intervalMs > 0 {
		b.WriteString(decimal2(1000 * (float64(s.intervalOp) / float64(s.intervalMs))))
		b.WriteString(" current ops/sec; ")
	}
	line := b.String()
	if s.todo != 0 {
		throughput := 1000 * (float64(s.ops) / float64(s.elapsedMs))
		line += "est completion in " + remaining(javaLong(math.Ceil(float64(s.todo)/throughput)))
	}
	if s.bar && s.progress >= 0 {
		line += progressBar(s.progress)
	}
	return line
}

// remaining is YCSB's RemainingFormatter: days and hours, minutes when under
// a day, seconds only when nothing else was printed; each unit followed by
// a space, "seconds" always plural.
func remaining(seconds int64) string {
	var b strings.Builder
	unit := func(n int64, one, many string) {
		b.WriteString(strconv.FormatInt(n, 10))
		if n == 1 {
			b.WriteString(one)
		} else {
			b.WriteString(many)
		}
	}
	days := seconds / 86400
	if days > 0 {
		unit(days, " day ", " days ")
		seconds -= days * 86400
	}
	if hours := seconds / 3600; hours > 0 {
		unit(hours, " hour ", " hours ")
		seconds -= hours * 3600
	}
	if days < 1 {
		if minutes := seconds / 60; minutes > 0 {
			unit(minutes, " minute ", " minutes ")
		}
	}
	if b.Len() == 0 {
		b.WriteString(strconv.FormatInt(seconds, 10))
		b.WriteString(" seconds ")
	}
	return b.String()
}

// progressBar draws a 30-cell bar and the percentage done.
func progressBar(frac float64) string {
	frac = min(max(frac, 0), 1)
	const width = 30
	full := int(frac * width)
	return " [" + strings.Repeat("#", full) + strings.Repeat(".", width-full) + "] " +
		strconv.Itoa(int(frac*100)) + "%"
}
