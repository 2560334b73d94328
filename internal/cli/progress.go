package cli

import (
	"fmt"
	"io"
	"time"
)

// progressEvery is how often a long command prints its progress.
const progressEvery = 2 * time.Second

// progress prints a long command's progress to w (nil: nowhere): a line
// every progressEvery, and a summary at the end.
type progress struct {
	w     io.Writer
	what  string
	start time.Time
	next  time.Time
}

func (kv *KV) progress(what string, start time.Time) *progress {
	return &progress{w: kv.Progress, what: what, start: start, next: start.Add(progressEvery)}
}

// tick reports n records done, of total (0: unknown), when a line is due.
// It reads the clock: a caller that goes record by record calls it every
// few hundred.
func (p *progress) tick(n, total int64) {
	if p.w == nil {
		return
	}
	now := time.Now()
	if now.Before(p.next) {
		return
	}
	p.next = now.Add(progressEvery)
	of := ""
	if total > 0 {
		of = fmt.Sprintf(" of %d (%d%%)", total, n*100/total)
	}
	fmt.Fprintf(p.w, "cairn kv %s: %d records%s, %d/s\n", p.what, n, of, int64(float64(n)/now.Sub(p.start).Seconds()))
}

// done prints the summary line.
func (p *progress) done(summary string, n int64) {
	if p.w == nil {
		return
	}
	took := time.Since(p.start)
	fmt.Fprintf(p.w, "cairn kv %s: %s in %.1fs (%d/s)\n", p.what, summary, took.Seconds(), int64(float64(n)/max(took.Seconds(), 1e-3)))
}
