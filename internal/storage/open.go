package storage

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairndb/cairn/internal/storage/files"
	crerrors "github.com/cockroachdb/errors"
	"github.com/cockroachdb/pebble/v2"
)

// ErrFaulted is returned (wrapped, with the Fault) by Open when the engine's
// last run stopped on a fatal I/O error and Config.NoPeers is not set:
// the files may lack writes the engine had acknowledged to its peers. A
// replicated node rebuilds from its peers instead of using them.
var ErrFaulted = errors.New("storage: the last run stopped on a storage fault")

// FaultError is the error Open returns for a recorded fault.
type FaultError struct{ Fault Fault }

func (e *FaultError) Error() string {
	return fmt.Sprintf("%v: %s", ErrFaulted, e.Fault.String())
}

func (e *FaultError) Unwrap() error { return ErrFaulted }

// refuse builds the error of an engine that cannot be proven whole.
func (e *Engine) refuse(format string, args ...any) error {
	msg := pebbleFileRE.ReplaceAllString(fmt.Sprintf(format, args...), "$1.sst")
	return fmt.Errorf("%w: %s: %s; nothing was changed or deleted", ErrCorrupt, e.cfg.Dir, msg)
}

// pebbleFileRE finds Pebble's "file 000012" (an sstable) in its messages.
var pebbleFileRE = regexp.MustCompile(`\bfile (\d{6})\b`)

// open proves the files whole with Pebble read-only, then reopens Pebble
// read-write, or keeps it read-only on a full disk (see the design in
// docs/design/20261125_storage_faults.md).
func (e *Engine) open() error {
	desc, err := pebble.Peek(e.cfg.Dir, e.fs)
	if err != nil {
		return fmt.Errorf("storage: %s: %w", e.cfg.Dir, err)
	}
	st, hasState, err := e.readState()
	if err != nil {
		return err
	}
	if desc.Exists {
		if desc.Exists, err = e.finishedCreate(desc.ManifestFilename, st, hasState); err != nil {
			return err
		}
	}
	if !desc.Exists {
		if err := e.checkEmpty(st, hasState); err != nil {
			return err
		}
		return e.openWritable(engineState{}, false)
	}
	if err := e.checkOptions(desc.OptionsFilename); err != nil {
		return err
	}
	ro, err := pebble.Open(e.cfg.Dir, e.options(true))
	if err != nil {
		return e.openError(err, desc.ManifestFilename)
	}
	if err := e.prove(ro, desc.ManifestFilename, st, hasState); err != nil {
		_ = ro.Close()
		return err
	}
	st.Corrupt = nil // proven good again (prove re-checked it)
	if e.cfg.NoPeers && st.Fault != nil {
		e.log.Warn("the last run stopped on a storage fault; the files proved whole, so the engine opens (only unsynced writes can be missing)",
			"fault", st.Fault.String())
		st.Fault = nil
	}
	if need, avail, full := e.tooFullToOpen(); full {
		e.log.Warn("the disk is too full to open the engine for writing: serving reads only until space is freed",
			"dir", e.cfg.Dir, "free_bytes", avail, "needed_bytes", need)
		e.state = st
		e.db.Store(ro)
		e.ro.Store(true)
		return nil
	}
	if err := ro.Close(); err != nil {
		return fmt.Errorf("storage: %s: %w", e.cfg.Dir, err)
	}
	return e.openWritable(st, true)
}

// openWritable records the open in the state file, then opens Pebble
// read-write.
func (e *Engine) openWritable(st engineState, existed bool) error {
	if !existed {
		st = engineState{}
	}
	st.Clean, st.BootID = false, e.cfg.BootID()
	e.stateMu.Lock()
	e.state = st
	err := e.writeStateLocked()
	e.stateMu.Unlock()
	if err != nil {
		return fmt.Errorf("storage: recording the open in %s: %w", e.statePath(), err)
	}
	db, err := pebble.Open(e.cfg.Dir, e.options(false))
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return e.lockedErr(err)
	} else if err != nil {
		return fmt.Errorf("storage: open %s: %w", e.cfg.Dir, err)
	}
	if _, ok, err := getUint64(db, metaStateFileKey); err == nil && !ok {
		var one [8]byte
		one[7] = 1
		err = db.Set(metaStateFileKey, one[:], pebble.Sync)
	}
	if err != nil {
		_ = db.Close()
		return fmt.Errorf("storage: open %s: %w", e.cfg.Dir, err)
	}
	e.db.Store(db)
	e.armed.Store(true)
	return nil
}

// checkOptions checks the OPTIONS file as Pebble will, naming it if it
// does not parse or does not fit.
func (e *Engine) checkOptions(path string) error {
	if path == "" {
		return nil
	}
	data, err := files.ReadFile(e.fs, path)
	if err != nil {
		return fmt.Errorf("storage: open %s: %w", e.cfg.Dir, err)
	}
	opts := e.options(true)
	opts.EnsureDefaults()
	if err := opts.CheckCompatibility(e.cfg.Dir, string(data)); err != nil {
		return e.refuse("%s is damaged: %v", e.fs.PathBase(path), err)
	}
	return nil
}

// finishedCreate reports whether the store whose marker names manifest was
// created whole. A crash while Pebble created it can leave the marker
// without the MANIFEST (their directory entries are synced together, so
// either may survive alone). If no data was written either (checkEmpty),
// nothing can be lost: the markers are removed and the store is created
// anew. A marker without its MANIFEST next to data is refused.
func (e *Engine) finishedCreate(manifest string, st engineState, hasState bool) (bool, error) {
	if _, err := e.fs.Stat(manifest); !files.IsNotExist(err) {
		return true, nil
	}
	if !e.holdsNoData(st, hasState) {
		return true, e.refuse("its MANIFEST marker names %s, which is missing, and it holds data that cannot be read without it", e.fs.PathBase(manifest))
	}
	names, err := e.fs.List(e.cfg.Dir)
	if err != nil {
		return true, fmt.Errorf("storage: %s: %w", e.cfg.Dir, err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "marker.") {
			if err := e.fs.Remove(e.fs.PathJoin(e.cfg.Dir, n)); err != nil {
				return true, fmt.Errorf("storage: %s: removing %s, left by an unfinished creation: %w", e.cfg.Dir, n, err)
			}
		}
	}
	e.log.Warn("the store's creation was interrupted before any data was written (its MANIFEST marker names a file that is not there): creating it anew",
		"dir", e.cfg.Dir, "manifest", e.fs.PathBase(manifest))
	return false, nil
}

// holdsNoData reports whether the directory holds no sstable, no WAL with
// a record and no state file naming applied indexes.
func (e *Engine) holdsNoData(st engineState, hasState bool) bool {
	names, err := e.fs.List(e.cfg.Dir)
	if err != nil || slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, ".sst") }) {
		return false
	}
	for _, w := range e.wals() {
		if e.walHoldsRecords(w) {
			return false
		}
	}
	return !hasState || st.Checkpoint == nil || len(st.Checkpoint.Applied) == 0
}

// walHoldsRecords reports whether a WAL holds a record (or cannot be read).
func (e *Engine) walHoldsRecords(w walName) bool {
	res, _, err := e.scanFile(w.name, w.num)
	return err != nil || res.Records > 0 || res.ResumeRecords > 0
}

// checkEmpty refuses to create a store where one was: Pebble files without
// a MANIFEST marker, or a state file that names applied indexes.
func (e *Engine) checkEmpty(st engineState, hasState bool) error {
	names, err := e.fs.List(e.cfg.Dir)
	if err != nil {
		return fmt.Errorf("storage: %s: %w", e.cfg.Dir, err)
	}
	// A MANIFEST, an OPTIONS file or a WAL without records, and no marker,
	// is what a crash while creating the store leaves: nothing was written
	// yet. Tables or logged writes mean a store was here.
	for _, n := range names {
		if strings.HasSuffix(n, ".sst") {
			return e.refuse("it holds Pebble files (%s) but no current MANIFEST marker, so they cannot be read", n)
		}
	}
	for _, w := range e.wals() {
		if e.walHoldsRecords(w) {
			return e.refuse("it holds Pebble files (%s) but no current MANIFEST marker, so they cannot be read", w.name)
		}
	}
	if hasState && st.Checkpoint != nil && len(st.Checkpoint.Applied) > 0 {
		return e.refuse("%s records a store (%s at %s) but its data files are gone",
			stateFileName, st.Checkpoint, st.Checkpoint.Time.Format(time.RFC3339))
	}
	return nil
}

// size returns the size of a file in the engine's directory (0 if unknown).
func (e *Engine) size(name string) int64 {
	fi, err := e.fs.Stat(e.fs.PathJoin(e.cfg.Dir, name))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// lockedErr is the error of an engine directory another process has open.
func (e *Engine) lockedErr(err error) error {
	return fmt.Errorf("storage: %s is locked by another process (is another cairn running on this root?): %w", e.cfg.Dir, err)
}

// openError explains a failed read-only open: a lock, or corruption that
// Pebble found (named by scanning the logs ourselves when Pebble does not).
//
// The logs are scanned whatever Pebble's error: Pebble reads a MANIFEST up
// to its first bad chunk and may then fail on what the cut history names
// (an sstable a later edit had deleted: "file does not exist"), an error
// not marked as corruption. A file the MANIFEST names that is gone is
// refused as corruption too (the design's check 4, which Pebble's open
// reaches first).
func (e *Engine) openError(err error, manifest string) error {
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return e.lockedErr(err)
	}
	rep := e.scanLogs(manifest, false)
	switch {
	case rep.err != nil:
		return fmt.Errorf("storage: open %s: %w (and reading its logs: %v)", e.cfg.Dir, err, rep.err)
	case rep.damage != "":
		return e.refuse("%s", rep.damage)
	case files.IsNotExist(err):
		what := "a file the MANIFEST names"
		if m := fileNumRE.FindStringSubmatch(err.Error()); m != nil {
			what = fmt.Sprintf("sstable %s.sst, which the MANIFEST names,", m[1])
		}
		cause := ""
		if len(rep.ends) > 0 {
			cause = " (" + strings.Join(rep.ends, "; ") + ")"
		}
		return e.refuse("%s is missing%s: %v", what, cause, pebbleDetail(err))
	case !pebble.IsCorruptionError(err) && !strings.Contains(err.Error(), "pebble/record"):
		return fmt.Errorf("storage: open %s: %w", e.cfg.Dir, err)
	}
	return e.refuse("Pebble cannot read it: %v", pebbleDetail(err))
}

// prove runs the checks an open needs with Pebble read-only.
func (e *Engine) prove(ro *pebble.DB, manifest string, st engineState, hasState bool) error {
	rebooted := st.BootID == "" || st.BootID != e.cfg.BootID()
	rep := e.scanLogs(manifest, rebooted && e.cfg.NoPeers)
	switch {
	case rep.err != nil:
		return fmt.Errorf("storage: open %s: reading its logs: %w", e.cfg.Dir, rep.err)
	case rep.damage != "":
		return e.refuse("%s", rep.damage)
	}
	if err := e.checkTables(ro); err != nil {
		return err
	}
	if _, marked, err := getUint64(ro, metaStateFileKey); err != nil {
		return e.readFailed("reading its meta", err)
	} else if marked && !hasState {
		return e.refuse("%s is missing, so its last checkpoint cannot be checked", stateFileName)
	}
	applied, err := appliedIndexes(ro)
	if err != nil {
		return e.readFailed("reading its applied indexes", err)
	}
	if st.Checkpoint != nil {
		if behind := st.Checkpoint.behind(applied); len(behind) > 0 {
			slices.Sort(behind)
			cause := "a MANIFEST or WAL lost records"
			if len(rep.ends) > 0 {
				cause = strings.Join(rep.ends, "; ")
			}
			return e.refuse("it is behind its checkpoint of %s (%s): %s; %s",
				st.Checkpoint.Time.Format(time.RFC3339), stateFileName, strings.Join(behind, "; "), cause)
		}
	}
	if st.Corrupt != nil {
		if err := e.recheck(ro, st.Corrupt); err != nil {
			return err
		}
	}
	if st.Fault != nil && !e.cfg.NoPeers {
		return &FaultError{Fault: *st.Fault}
	}
	return nil
}

// readFailed is the error of a read during the proof: a refusal when it
// found damage, a plain error (the store may be whole) otherwise.
func (e *Engine) readFailed(what string, err error) error {
	if pebble.IsCorruptionError(err) || errors.Is(err, ErrCorrupt) {
		return e.refuse("%s: %v", what, pebbleDetail(err))
	}
	return fmt.Errorf("storage: open %s: %s: %w", e.cfg.Dir, what, err)
}

// logReport is what scanning the MANIFEST and the WALs found: the first
// damage (a bad chunk with good records after it), and bad chunks at the
// ends of logs, which read as torn writes but would explain lost records.
// err is a failure to read them at all (not a proof of damage).
type logReport struct {
	damage string
	ends   []string
	err    error
}

// scanLogs scans the MANIFEST and every WAL. rebooted tolerates damage in
// the newest WAL, where power loss can leave unsynced holes (see the
// design).
func (e *Engine) scanLogs(manifest string, rebooted bool) logReport {
	var rep logReport
	if manifest != "" {
		name := e.fs.PathBase(manifest)
		res, f, err := e.scanFile(name, 0)
		switch {
		case err != nil:
			rep.err = err
			return rep
		case f != "":
			rep.damage = f
			return rep
		}
		rep.noteEnd(name, res, true)
	}
	wals := e.wals()
	for i, w := range wals {
		res, f, err := e.scanFile(w.name, w.num)
		switch {
		case err != nil:
			rep.err = err
			return rep
		case f == "":
			rep.noteEnd(w.name, res, false)
		case i == len(wals)-1 && rebooted:
			e.log.Warn("the newest WAL has a hole after a reboot: the writes after it were never synced and are dropped (WRITE_NO_SYNC allows this)",
				"file", e.fs.PathJoin(e.cfg.Dir, w.name), "finding", f)
		default:
			rep.damage = f
			return rep
		}
	}
	return rep
}

// noteEnd records a log that ends in a bad chunk: any bad end of the
// MANIFEST (which is synced after every edit), and a WAL's bad checksum
// or header (not its usual ends: a recycled file's older data, zeros, a
// write cut short).
func (r *logReport) noteEnd(name string, res logEnd, manifest bool) {
	usual := strings.Contains(res.Why, "older log") || res.Why == "zeroed chunk" || strings.HasPrefix(res.Why, "truncated") || res.Why == "log ends inside a record"
	if res.Stop >= 0 && (manifest || !usual) {
		r.ends = append(r.ends, fmt.Sprintf("%s ends in a bad record at offset %d (%s), so nothing after offset %d can be read", name, res.Stop, res.Why, res.End))
	}
}

type walName struct {
	name string
	num  uint32
}

// wals lists the WAL files in number order.
func (e *Engine) wals() []walName {
	names, _ := e.fs.List(e.cfg.Dir)
	var out []walName
	for _, n := range names {
		if !strings.HasSuffix(n, ".log") {
			continue
		}
		num, err := strconv.ParseUint(strings.TrimSuffix(n, ".log"), 10, 32)
		if err == nil {
			out = append(out, walName{n, uint32(num)})
		}
	}
	slices.SortFunc(out, func(a, b walName) int { return int(a.num) - int(b.num) })
	return out
}

// scanFile scans one record log; the string describes damage, or is "";
// err is a failure to read the file at all.
func (e *Engine) scanFile(name string, logNum uint32) (logEnd, string, error) {
	path := e.fs.PathJoin(e.cfg.Dir, name)
	f, err := e.fs.Open(path)
	if err != nil {
		return logEnd{}, "", fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return logEnd{}, "", fmt.Errorf("%s: %w", name, err)
	}
	res, err := scanLog(f, fi.Size(), logNum)
	switch {
	case err != nil:
		return res, "", fmt.Errorf("%s: %w", name, err)
	case res.damaged():
		return res, fmt.Sprintf("%s is corrupt at offset %d: %s, and %d record(s) follow from offset %d (a crash leaves a torn end, never good records after a bad one)",
			name, res.Stop, res.Why, res.ResumeRecords, res.Resume), nil
	}
	return res, "", nil
}

// checkTables checks that every sstable the MANIFEST names is there with
// its recorded size.
func (e *Engine) checkTables(ro *pebble.DB) error {
	levels, err := ro.SSTables()
	if err != nil {
		return e.refuse("listing its sstables: %v", err)
	}
	for level, tables := range levels {
		for _, t := range tables {
			name := fmt.Sprintf("%06d.sst", uint64(t.BackingSSTNum))
			fi, err := e.fs.Stat(e.fs.PathJoin(e.cfg.Dir, name))
			switch {
			case files.IsNotExist(err):
				return e.refuse("sstable %s of level %d, named by the MANIFEST, is missing: %v", name, level, err)
			case err != nil:
				return fmt.Errorf("storage: open %s: %w", e.cfg.Dir, err)
			case !t.Virtual && uint64(fi.Size()) != t.Size:
				return e.refuse("sstable %s of level %d is %d bytes, but the MANIFEST says %d", name, level, fi.Size(), t.Size)
			}
		}
	}
	return nil
}

// tooFullToOpen reports whether free space is below what a writable open
// needs: the WAL bytes the open flushes, 4 MiB for a new MANIFEST, WAL and
// OPTIONS, and the part of the margin deletes may use. With that much, the
// engine opens writable, refusing puts but taking deletes, which free
// space; with less it serves reads only.
func (e *Engine) tooFullToOpen() (need, avail int64, full bool) {
	avail, ok := e.space.statfs()
	if !ok {
		return 0, 0, false
	}
	need = e.cfg.MinFreeBytes/4 + 4<<20
	for _, w := range e.wals() {
		if fi, err := e.fs.Stat(e.fs.PathJoin(e.cfg.Dir, w.name)); err == nil {
			need += fi.Size()
		}
	}
	return need, avail, avail < need
}

var fileNumRE = regexp.MustCompile(`\b(\d{6})\b`)

// pebbleDetail renders a Pebble error with its details (the WAL number and
// offset of a replay failure, for instance).
func pebbleDetail(err error) string {
	msg := err.Error()
	if d := crerrors.GetAllDetails(err); len(d) > 0 {
		msg += " (" + strings.Join(d, "; ") + ")"
	}
	return msg
}
