package storage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cockroachdb/pebble/v2"
)

// The engine's state file, DATA/cairn-state.json, a checked file (package
// files) beside Pebble's own:
//
//	{
//	  "format": 1,
//	  "clean": true,                 written after a clean Close, false while open
//	  "boot_id": "5c1f…",            the kernel's boot id when the engine last opened
//	  "checkpoint": {                applied indexes known durable at "time"
//	    "time": "2026-11-25T14:00:00Z",
//	    "applied": {"lite": 1234, "shard 2": 99}
//	  },
//	  "fault": {...},                a fatal I/O error stopped the last run (Fault)
//	  "corrupt": {...}               corruption found while running (Corruption)
//	}
//
// An engine that has written its state file records that in its meta
// ('m' "statefile"), so a state file that goes missing is noticed.
const (
	stateFileName = "cairn-state.json"
	stateFormat   = 1
)

var metaStateFileKey = []byte("mstatefile")

type engineState struct {
	Format     int         `json:"format"`
	Clean      bool        `json:"clean"`
	BootID     string      `json:"boot_id,omitempty"`
	Checkpoint *checkpoint `json:"checkpoint,omitempty"`
	Fault      *Fault      `json:"fault,omitempty"`
	Corrupt    *Corruption `json:"corrupt,omitempty"`
}

type checkpoint struct {
	Time    time.Time         `json:"time"`
	Applied map[string]uint64 `json:"applied"`
}

// Fault is a fatal I/O error of an engine's earlier run: the file, the
// operation and the errno. The data it left may be incomplete.
type Fault struct {
	Time  time.Time `json:"time"`
	Op    string    `json:"op,omitempty"`
	File  string    `json:"file,omitempty"`
	Errno string    `json:"errno,omitempty"`
	Error string    `json:"error"`
}

func (f *Fault) String() string {
	return fmt.Sprintf("%s at %s", f.Error, f.Time.Format(time.RFC3339))
}

// Corruption is damage found in a file while the engine ran.
type Corruption struct {
	Time   time.Time `json:"time"`
	File   string    `json:"file,omitempty"`
	Detail string    `json:"detail"`
}

// appliedName names a state's applied index: "lite" for the single-shard
// store, "shard N" for a replicated shard.
func appliedName(shard uint64) string { return "shard " + strconv.FormatUint(shard, 10) }

const liteApplied = "lite"

func (e *Engine) statePath() string { return e.fs.PathJoin(e.cfg.Dir, stateFileName) }

// readState reads the state file; ok is false if there is none.
func (e *Engine) readState() (st engineState, ok bool, err error) {
	err = files.ReadJSON(e.cfg.FS, e.statePath(), &st)
	switch {
	case files.IsNotExist(err):
		return st, false, nil
	case errors.Is(err, files.ErrCorrupt):
		return st, false, fmt.Errorf("%w: %w", ErrCorrupt, err)
	case err != nil: // EACCES, EIO, EMFILE...: not a proof of damage
		return st, false, fmt.Errorf("storage: %w", err)
	case st.Format != stateFormat:
		return st, false, fmt.Errorf("%w: %s: format %d, this version reads %d", ErrCorrupt, e.statePath(), st.Format, stateFormat)
	}
	return st, true, nil
}

// writeState writes e.state; the caller holds stateMu.
func (e *Engine) writeStateLocked() error {
	e.state.Format = stateFormat
	return files.WriteJSON(e.cfg.FS, e.statePath(), &e.state)
}

// appliedIndexes reads every applied index the engine holds.
func appliedIndexes(r pebble.Reader) (map[string]uint64, error) {
	out := make(map[string]uint64)
	if v, ok, err := getUint64(r, metaAppliedKey); err != nil {
		return nil, err
	} else if ok {
		out[liteApplied] = v
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{shardSpace}, UpperBound: []byte{shardSpace + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != 10 || k[9] != shardApplied {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, err
		}
		if len(v) != 8 {
			return nil, fmt.Errorf("%w: applied index of %d bytes under %x", ErrCorrupt, len(v), k)
		}
		out[appliedName(beUint64(k[1:9]))] = beUint64(v)
	}
	return out, it.Error()
}

func getUint64(r pebble.Reader, key []byte) (uint64, bool, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	} else if err != nil {
		return 0, false, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, false, fmt.Errorf("%w: %q holds %d bytes, not 8", ErrCorrupt, key, len(v))
	}
	return beUint64(v), true, nil
}

// behind lists what is below the checkpoint: an applied index lower than
// recorded, or one that is gone.
func (c *checkpoint) behind(now map[string]uint64) []string {
	var out []string
	for name, want := range c.Applied {
		got, ok := now[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s is gone (applied index %d at the checkpoint)", name, want))
		case got < want:
			out = append(out, fmt.Sprintf("%s is at applied index %d, below %d at the checkpoint", name, got, want))
		}
	}
	return out
}

func (c *checkpoint) String() string {
	var parts []string
	for name, v := range c.Applied {
		parts = append(parts, fmt.Sprintf("%s=%d", name, v))
	}
	return strings.Join(parts, " ")
}
