package node

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/files"
)

// A storage node remembers every time it found its storage corrupt or
// faulted and rebuilt it from its peers, in a checked file (package files)
// in its root, the last maxIncidents of them, oldest first:
//
//	ROOT/incidents.json
//	data: {
//	  "incidents": [
//	    {
//	      "seq": 3,                               increasing per node, from 1
//	      "time": "2026-11-25T14:02:11Z",         when the node set the files aside (UTC)
//	      "kind": "corrupt",                      corrupt (storage.ErrCorrupt) or fault (storage.ErrFaulted)
//	      "detail": "storage: corrupt data: …",   the storage error, naming the file
//	      "aside_dir": "/r/sn2/data.corrupt-20261125T140211Z",  the old files, kept
//	      "shards": [1, 2],                       the shards it rebuilds
//	      "admin": false,                         true: the admin's engine (ROOT/admin)
//	      "resolved": true,                       every replica was readmitted and applied a snapshot
//	      "resolved_time": "2026-11-25T14:02:19Z"
//	    }
//	  ]
//	}
//
// It is written (atomically, synced) before the node opens the fresh
// engine, so an incident is never lost; a crash before the rename leaves
// the old files in place and the next start finds them again.
const (
	incidentsFile = "incidents.json"
	maxIncidents  = 50
)

// Incident kinds.
const (
	kindCorrupt = "corrupt"
	kindFault   = "fault"
)

type incident struct {
	Seq          int64      `json:"seq"`
	Time         time.Time  `json:"time"`
	Kind         string     `json:"kind"`
	Detail       string     `json:"detail"`
	AsideDir     string     `json:"aside_dir"`
	Shards       []uint64   `json:"shards,omitempty"`
	Admin        bool       `json:"admin,omitempty"`
	Resolved     bool       `json:"resolved"`
	ResolvedTime *time.Time `json:"resolved_time,omitempty"`
}

type incidentsDoc struct {
	Incidents []incident `json:"incidents"`
}

// incidentLog is the node's incidents, in memory and in ROOT/incidents.json.
// Its methods are safe for concurrent use.
type incidentLog struct {
	fs   files.FS
	path string
	mu   sync.Mutex
	list []incident
}

// loadIncidents reads ROOT/incidents.json; a missing file is an empty log.
func loadIncidents(fs files.FS, root string) (*incidentLog, error) {
	l := &incidentLog{fs: fs, path: filepath.Join(root, incidentsFile)}
	var doc incidentsDoc
	err := files.ReadJSON(l.fs, l.path, &doc)
	switch {
	case files.IsNotExist(err):
	case err != nil:
		return nil, fmt.Errorf("%w (the node's record of storage incidents; move it aside to start without it)", err)
	}
	l.list = doc.Incidents
	return l, nil
}

// incidentKind is the kind of incident an error of storage.Open is, or ""
// when it is neither corruption nor a recorded fault.
func incidentKind(err error) string {
	switch {
	case errors.Is(err, storage.ErrFaulted):
		return kindFault
	case errors.Is(err, storage.ErrCorrupt), errors.Is(err, files.ErrCorrupt):
		return kindCorrupt
	}
	return ""
}

// add records a new incident and returns it.
func (l *incidentLog) add(in incident) (incident, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	in.Seq = 1
	if n := len(l.list); n > 0 {
		in.Seq = l.list[n-1].Seq + 1
	}
	list := append(slices.Clone(l.list), in)
	if len(list) > maxIncidents {
		list = list[len(list)-maxIncidents:]
	}
	if err := files.WriteJSON(l.fs, l.path, incidentsDoc{Incidents: list}); err != nil {
		return in, fmt.Errorf("recording the incident in %s: %w", l.path, err)
	}
	l.list = list
	return in, nil
}

// unresolved reports whether an incident of the data engine (admin false)
// or of the admin's engine (admin true) is not resolved yet.
func (l *incidentLog) unresolved(admin bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.list, func(in incident) bool { return !in.Resolved && in.Admin == admin })
}

// resolve marks every unresolved incident of the data engine (admin false)
// or of the admin's engine as resolved now.
func (l *incidentLog) resolve(admin bool) ([]incident, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := slices.Clone(l.list)
	now := time.Now().UTC()
	var done []incident
	for i := range list {
		if !list[i].Resolved && list[i].Admin == admin {
			list[i].Resolved, list[i].ResolvedTime = true, &now
			done = append(done, list[i])
		}
	}
	if len(done) == 0 {
		return nil, nil
	}
	if err := files.WriteJSON(l.fs, l.path, incidentsDoc{Incidents: list}); err != nil {
		return nil, fmt.Errorf("recording the rebuild in %s: %w", l.path, err)
	}
	l.list = list
	return done, nil
}

// snapshot returns a copy of the incidents, oldest first.
func (l *incidentLog) snapshot() []incident {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.list)
}

// pb renders an incident for NodeInfo.
func (in incident) pb() *controlpb.Incident {
	p := &controlpb.Incident{Seq: in.Seq, TimeUnixMs: in.Time.UnixMilli(), Kind: in.Kind, Detail: in.Detail,
		AsideDir: in.AsideDir, Resolved: in.Resolved, Shards: in.Shards, Admin: in.Admin}
	if in.ResolvedTime != nil {
		p.ResolvedUnixMs = in.ResolvedTime.UnixMilli()
	}
	return p
}
