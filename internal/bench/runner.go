package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/internal/bench/result"
)

// ErrIntegrity is returned (wrapped) by Run after a dataintegrity run in
// which some record did not verify. The results have been printed and
// exported; the command exits with status 1.
var ErrIntegrity = errors.New("bench: data integrity check failed")

// Env is where a run writes and what it says about itself.
type Env struct {
	// Stdout receives the YCSB text summary (and the few notices YCSB
	// prints to stdout).
	Stdout io.Writer
	// Stderr receives the preamble, status lines and operation errors.
	Stderr io.Writer
	// Version is the Cairn version for the result document.
	Version string
	// Terminal says Stderr is a terminal: status lines get a progress bar.
	Terminal bool
}

// Execute runs "cairn bench load|run ARGS" in-process: it parses the
// arguments (printing the help for -h), builds the configuration and runs
// the phase. Errors a user must fix are *UsageError.
func Execute(ctx context.Context, phase string, args []string, env Env) (*result.Run, error) {
	ph, err := ParsePhase(phase)
	if err != nil {
		return nil, err
	}
	a, err := ParseArgs(ph, args)
	if err != nil {
		return nil, err
	}
	if a.Help {
		_, err := io.WriteString(env.Stdout, Usage)
		return nil, err
	}
	fmt.Fprintf(env.Stderr, "Command line: %s %s\n", phase, strings.Join(args, " "))
	cfg, err := NewConfig(ph, a.WorkloadName(), a.Props)
	if err != nil {
		return nil, err
	}
	if _, set := a.Props.Get("status"); env.Terminal && !set {
		cfg.Status = true // a person watching sees progress; -p status=false keeps quiet
	}
	return Run(ctx, cfg, env)
}

// Run runs one phase. Cancelling ctx stops it as maxexecutiontime does:
// operations in flight finish and the results so far are reported.
func Run(ctx context.Context, cfg *Config, env Env) (_ *result.Run, err error) {
	env.Stderr = &lockedWriter{w: env.Stderr} // workers, monitor and timers all write to it
	fmt.Fprintf(env.Stderr, "Cairn bench %s (YCSB core workload), seed %d\n", env.Version, cfg.Seed)
	fmt.Fprintln(env.Stderr, "Loading workload...")
	if err := prepareExport(cfg.ExportFile); err != nil {
		return nil, err
	}
	w, err := NewWorkload(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.DataIntegrity {
		fmt.Fprintln(env.Stdout, "Data integrity is enabled.")
	}
	log := newErrLog(env.Stderr)
	b, err := openBinding(ctx, cfg, env, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := b.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("bench: closing -db %s: %w", cfg.DB, cerr)
		}
	}()

	opcount := cfg.OperationCount
	if cfg.Phase == PhaseLoad {
		opcount = cfg.InsertCount
	}
	threads := cfg.Threads
	if opcount > 0 && int64(threads) > opcount {
		threads = int(opcount)
		fmt.Fprintln(env.Stdout, "Warning: the threadcount is bigger than recordcount, the threadcount will be recordcount!")
	}
	var tickNs int64
	if cfg.Target > 0 {
		perThreadPerMs := float64(cfg.Target) / float64(threads) / 1000
		tickNs = int64(1e6 / perThreadPerMs)
	}

	var stop atomic.Bool
	stopC := make(chan struct{})
	var stopOnce sync.Once
	requestStop := func(why string) {
		stopOnce.Do(func() {
			if why != "" {
				fmt.Fprintln(env.Stderr, why)
			}
			stop.Store(true)
			close(stopC)
		})
	}

	epoch := time.Now()
	ts := make([]*threadStats, threads)
	ks := make([]*worker, threads)
	counts := make([]int64, threads)
	for i := range threads {
		db, err := b.NewDB(i)
		if err != nil {
			return nil, fmt.Errorf("bench: -db %s: thread %d: %w", cfg.DB, i, err)
		}
		ts[i] = &threadStats{mode: cfg.Measure}
		k := newWorker(w, db, i, ts[i], epoch)
		k.ctx, k.stop, k.stopC, k.log = context.WithoutCancel(ctx), &stop, stopC, log
		ks[i] = k
		counts[i] = opcount / int64(threads)
		if int64(i) < opcount%int64(threads) {
			counts[i]++
		}
	}

	fmt.Fprintln(env.Stderr, "Starting test.")
	stopProfile, err := startCPUProfile(cfg.Cairn.CPUProfile)
	if err != nil {
		return nil, err
	}
	var gc0, gc1 runtime.MemStats
	runtime.ReadMemStats(&gc0)
	epoch = time.Now()
	for _, k := range ks {
		k.epoch = epoch
	}
	mon := newMonitor(cfg, env, ts, counts, epoch)
	var gaveUp error // set once by the monitor, read after it finished
	mon.giveUp = cfg.Cairn.GiveUp
	mon.stop = func(since time.Duration) {
		gaveUp = giveUpError(since, log.lastErr())
		requestStop(fmt.Sprintf("No operation has had an answer for %s while operations failed; giving up (cairn.giveup=%s).",
			since.Round(time.Second), cfg.Cairn.GiveUp))
	}
	go mon.run()
	if cfg.MaxExecution > 0 {
		fmt.Fprintf(env.Stderr, "Maximum execution time specified as: %d secs\n", int64(cfg.MaxExecution/time.Second))
		t := time.AfterFunc(cfg.MaxExecution, func() {
			requestStop("Maximum time elapsed. Requesting stop for the workload.")
		})
		defer t.Stop()
	}
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		select {
		case <-ctx.Done():
			requestStop("Interrupted. Requesting stop for the workload.")
		case <-watchDone:
		}
	}()

	var wg sync.WaitGroup
	var errMu sync.Mutex
	var runErrs []error
	for i, k := range ks {
		wg.Go(func() {
			if err := k.loop(counts[i], tickNs); err != nil {
				errMu.Lock()
				runErrs = append(runErrs, fmt.Errorf("thread %d: %w", i, err))
				errMu.Unlock()
				requestStop("")
			}
		})
	}
	wg.Wait()
	runtimeMs := time.Since(epoch).Milliseconds()
	if err := stopProfile(); err != nil {
		return nil, err
	}
	series := mon.finish()
	runtime.ReadMemStats(&gc1)

	st := mergeStats(cfg.Measure, ts)
	var opsDone int64
	for _, t := range ts {
		opsDone += t.done.Load()
	}
	sum := &Summary{
		RuntimeMs: runtimeMs, Operations: opsDone,
		GCCount:      int64(gc1.NumGC - gc0.NumGC),
		GCPauseMs:    int64((gc1.PauseTotalNs - gc0.PauseTotalNs) / uint64(time.Millisecond)),
		Measurements: st.measurements(), Percentiles: cfg.Percentiles,
	}
	fmt.Fprintf(env.Stderr, "Done: %d operations in %d ms; %.2f heap allocations per operation in this process.\n",
		opsDone, runtimeMs, float64(gc1.Mallocs-gc0.Mallocs)/float64(max(opsDone, 1)))
	if err := WriteText(env.Stdout, sum); err != nil {
		return nil, fmt.Errorf("bench: writing the summary: %w", err)
	}
	run, err := buildResult(cfg, env.Version, epoch, threads, sum, st, series)
	if err != nil {
		return nil, err
	}
	if cfg.ExportFile != "" {
		if err := result.Save(cfg.ExportFile, run); err != nil {
			return run, fmt.Errorf("bench: exportfile: %w", err)
		}
	}
	if len(runErrs) > 0 {
		return run, fmt.Errorf("bench: the run stopped early: %w", errors.Join(runErrs...))
	}
	if gaveUp != nil {
		return run, gaveUp
	}
	if st.mismatch > 0 {
		return run, fmt.Errorf("%w: %d of %d records read did not verify (see [VERIFY] above)", ErrIntegrity, st.mismatch, st.checked)
	}
	return run, nil
}

// giveUpError is the run's error when the monitor gave up: it wraps the
// last operation error, so that a client error's exit status (3 when no
// node answered) is the command's.
func giveUpError(since time.Duration, last error) error {
	msg := fmt.Sprintf("bench: the run gave up: no operation had an answer for %s (cairn.giveup)", since.Round(time.Second))
	if last == nil {
		return errors.New(msg)
	}
	return fmt.Errorf("%s; the last error: %w", msg, last)
}

// startCPUProfile starts a CPU profile of this process into path (none
// when path is empty) and returns the function that stops and writes it.
// It covers the measured phase only: the threads' operations, not the
// binding's opening or the report.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("bench: cairn.cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: cairn.cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("bench: cairn.cpuprofile: %w", err)
		}
		return nil
	}, nil
}

func openBinding(ctx context.Context, cfg *Config, env Env, log *errLog) (Binding, error) {
	if cfg.binding != nil {
		return cfg.binding, nil
	}
	switch cfg.DB {
	case "null":
		return nullBinding{}, nil
	case "embedded":
		return openEmbedded(cfg, env.Version, env.Stderr, log)
	}
	return openCairn(ctx, cfg, log)
}

// monitor samples the total operation count every second for the result's
// series and, with -s, prints a status line every status.interval (and at
// the start and the end, as YCSB does). It reads only the threads' atomic
// counters.
type monitor struct {
	cfg     *Config
	env     Env
	ts      []*threadStats
	total   int64 // operations the threads were asked for; 0 if unbounded
	epoch   time.Time
	samples []result.Sample
	done    chan struct{}
	exited  chan struct{}

	lastMs, lastOps     int64 // previous sample
	statusMs, statusOps int64 // previous status line

	giveUp time.Duration       // cairn.giveup; 0: never
	stop   func(time.Duration) // called once when no answer came for giveUp
	gaveUp bool
}

func newMonitor(cfg *Config, env Env, ts []*threadStats, counts []int64, epoch time.Time) *monitor {
	m := &monitor{cfg: cfg, env: env, ts: ts, epoch: epoch, done: make(chan struct{}), exited: make(chan struct{})}
	for _, c := range counts {
		m.total += c
	}
	return m
}

func (m *monitor) ops() int64 {
	var n int64
	for _, t := range m.ts {
		n += t.done.Load()
	}
	return n
}

func (m *monitor) run() {
	defer close(m.exited)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	every := max(int(m.cfg.StatusInterval/time.Second), 1)
	if m.cfg.Status {
		m.status(0, 0)
	}
	for tick := 1; ; tick++ {
		select {
		case <-t.C:
			select {
			case <-m.done: // the run ended as the tick came: just the final line
				m.final()
				return
			default:
			}
			ms, ops := time.Since(m.epoch).Milliseconds(), m.ops()
			m.sample(ms, ops)
			m.checkAnswers()
			if m.cfg.Status && tick%every == 0 {
				m.status(ms, ops)
			}
		case <-m.done:
			m.final()
			return
		}
	}
}

// checkAnswers stops the run (once) when operations have failed and none
// has had an answer for giveUp: the store went away, and each operation
// would only wait out its timeout.
func (m *monitor) checkAnswers() {
	if m.giveUp <= 0 || m.gaveUp {
		return
	}
	var answered, failed int64
	for _, t := range m.ts {
		answered = max(answered, t.answered.Load())
		failed = max(failed, t.failed.Load())
	}
	if failed <= answered {
		return
	}
	if since := time.Since(m.epoch) - time.Duration(answered); since >= m.giveUp {
		m.gaveUp = true
		m.stop(since)
	}
}

func (m *monitor) final() {
	ms, ops := time.Since(m.epoch).Milliseconds(), m.ops()
	if ms > m.lastMs {
		m.sample(ms, ops)
	}
	if m.cfg.Status {
		m.status(ms, ops)
	}
}

func (m *monitor) sample(ms, ops int64) {
	rate := 0.0
	if ms > m.lastMs {
		rate = float64(ops-m.lastOps) * 1000 / float64(ms-m.lastMs)
	}
	m.samples = append(m.samples, result.Sample{TMs: ms, Operations: ops, OpsPerSec: rate})
	m.lastMs, m.lastOps = ms, ops
}

func (m *monitor) status(ms, ops int64) {
	var todo int64
	if m.total > 0 {
		todo = max(m.total-ops, 0)
	}
	progress := -1.0
	switch {
	case m.total > 0:
		progress = float64(ops) / float64(m.total)
	case m.cfg.MaxExecution > 0:
		progress = float64(ms) / float64(m.cfg.MaxExecution.Milliseconds())
	}
	line := statusLine{
		label: m.cfg.Label, wall: time.Now(), elapsedMs: ms, ops: ops, todo: todo,
		intervalMs: ms - m.statusMs, intervalOp: ops - m.statusOps,
		progress: progress, bar: m.env.Terminal,
	}
	fmt.Fprintln(m.env.Stderr, line.format())
	m.statusMs, m.statusOps = ms, ops
}

// finish stops the monitor (printing the last status line) and returns the
// throughput series.
func (m *monitor) finish() []result.Sample {
	close(m.done)
	<-m.exited
	return m.samples
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prepareExport makes sure, before the run, that the result document can
// be written at path: its directory is created if missing, and a directory
// that cannot be written is refused now rather than after the run.
func prepareExport(path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench: exportfile %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, ".cairn-bench-*")
	if err != nil {
		return fmt.Errorf("bench: exportfile %s: the directory cannot be written: %w", path, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
