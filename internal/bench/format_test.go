package bench

import (
	"math"
	"testing"
	"time"
)

func TestJavaDouble(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {1000, "1000.0"}, {98.91196834817013, "98.91196834817013"}, {0.5, "0.5"},
		{1e7, "1.0E7"}, {12345678.9, "1.23456789E7"}, {2067824.6484698097, "2067824.6484698097"},
		{0.001, "0.001"}, {0.0001, "1.0E-4"}, {-2.5, "-2.5"}, {math.NaN(), "NaN"}, {math.Inf(1), "Infinity"},
	} {
		if got := javaDouble(tc.f); got != tc.want {
			t.Errorf("javaDouble(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestOrdinal(t *testing.T) {
	for p, want := range map[float64]string{50: "50th", 95: "95th", 99: "99th", 99.9: "99.9th", 1: "1st", 2: "2nd", 3: "3rd", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 99.99: "99.99th", 100: "100th"} {
		if got := ordinal(p); got != want {
			t.Errorf("ordinal(%v) = %q, want %q", p, got, want)
		}
	}
}

func TestDecimal2(t *testing.T) {
	for f, want := range map[float64]string{1234.5: "1234.5", 1000: "1000", 0.125: "0.12", 2.675: "2.67", 8123.456: "8123.46", 0: "0"} {
		if got := decimal2(f); got != want {
			t.Errorf("decimal2(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestRemaining(t *testing.T) {
	for s, want := range map[int64]string{
		0: "0 seconds ", 1: "1 seconds ", 59: "59 seconds ", 60: "1 minute ", 61: "1 minute ",
		150: "2 minutes ", 3600: "1 hour ", 3720: "1 hour 2 minutes ", 86400: "1 day ",
		90061: "1 day 1 hour ", 2*86400 + 7200: "2 days 2 hours ",
	} {
		if got := remaining(s); got != want {
			t.Errorf("remaining(%d) = %q, want %q", s, got, want)
		}
	}
}

func TestStatusLine(t *testing.T) {
	wall := time.Date(2026, 1, 2, 15, 4, 5, 7_000_000, time.Local)
	for _, tc := range []struct {
		s    statusLine
		want string
	}{
		{statusLine{wall: wall, todo: 1000, progress: -1},
			"2026-01-02 15:04:05:007 0 sec: 0 operations; est completion in 0 seconds "},
		{statusLine{label: "A", wall: wall, elapsedMs: 10_000, ops: 80_000, todo: 920_000, intervalMs: 10_000, intervalOp: 80_000, progress: 0.08},
			"A2026-01-02 15:04:05:007 10 sec: 80000 operations; 8000 current ops/sec; est completion in 1 minute "},
		{statusLine{wall: wall, elapsedMs: 20_500, ops: 1000, intervalMs: 10_500, intervalOp: 333, progress: 0.5, bar: true},
			"2026-01-02 15:04:05:007 20 sec: 1000 operations; 31.71 current ops/sec;  [###############...............] 50%"},
	} {
		if got := tc.s.format(); got != tc.want {
			t.Errorf("status line\n got %q\nwant %q", got, tc.want)
		}
	}
}
