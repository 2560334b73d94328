package node

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/storage/files"
)

// A storage node made with `cairn sn init` keeps its boot config in its
// root, in a checked file (its "data" is shown; jq .data reads it). A
// changed byte fails its checksum, so it is not edited by hand: run
// cairn sn init again on a fresh root instead.
//
//	ROOT/config.json
//	{
//	  "uid": "3f0c…",            random, tells this node apart from any other
//	  "host": "127.0.0.1",       where it listens; clients and peers use the
//	  "port": 5000,              address the admin deployed it with
//	  "capacity": 2,             most shard replicas it may host
//	  "storage_dirs": ["/d1"],   its data directory (default ROOT/data)
//	  "created": "2026-…"
//	}
const InitFile = "config.json"

// InitConfig is the boot config of a storage node.
type InitConfig struct {
	UID         string    `json:"uid"`
	Host        string    `json:"host"`
	Port        int       `json:"port"`
	Capacity    int       `json:"capacity"`
	StorageDirs []string  `json:"storage_dirs,omitempty"`
	Created     time.Time `json:"created"`
}

// Validate reports a config that cannot work, naming the flag.
func (c InitConfig) Validate() error {
	switch {
	case c.Host == "":
		return errors.New("host: required (the address clients and other nodes reach this node at)")
	case net.ParseIP(c.Host) == nil && !validHostname(c.Host):
		return fmt.Errorf("host: %q is neither an IP address nor a host name", c.Host)
	case c.Port < 1 || c.Port > 65535:
		return fmt.Errorf("port: %d is not a TCP port (1-65535)", c.Port)
	case c.Capacity < 1 || c.Capacity > 1000:
		return fmt.Errorf("capacity: %d; give the number of shard replicas this node may host, 1 or more", c.Capacity)
	case len(c.StorageDirs) > 1:
		return fmt.Errorf("storagedir: %d given; a Cairn node keeps all its replicas in one engine, so give at most one", len(c.StorageDirs))
	}
	for _, d := range c.StorageDirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("storagedir: %q must be an absolute path", d)
		}
	}
	return nil
}

func validHostname(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// ErrInitConflict is returned by WriteInit, in an *InitConflictError, when
// the root already holds a different config.
var ErrInitConflict = errors.New("node: the root already holds a different storage node config")

// InitConflictError is the ErrInitConflict that WriteInit returns: it
// names the file and each setting that differs.
type InitConflictError struct {
	Path  string   // the existing ROOT/config.json
	Diffs []string // e.g. "capacity: 2 in the file, 4 given"
}

func (e *InitConflictError) Error() string {
	return fmt.Sprintf("%s already holds a different storage node config: %s; "+
		"run cairn sn init with the file's values, use another root, or delete the file if this node was never deployed",
		e.Path, strings.Join(e.Diffs, "; "))
}

// Unwrap returns ErrInitConflict.
func (e *InitConflictError) Unwrap() error { return ErrInitConflict }

// initDiffs names the settings in which given differs from the file's
// config old, as "NAME: OLD in the file, NEW given", by flag name.
func initDiffs(old, given InitConfig) []string {
	var out []string
	diff := func(name string, o, g any) {
		if !reflect.DeepEqual(o, g) {
			out = append(out, fmt.Sprintf("%s: %v in the file, %v given", name, o, g))
		}
	}
	dirs := func(d []string) string {
		if len(d) == 0 {
			return "none (ROOT/data)"
		}
		return strings.Join(d, ",")
	}
	diff("host", old.Host, given.Host)
	diff("port", old.Port, given.Port)
	diff("capacity", old.Capacity, given.Capacity)
	diff("storagedir", dirs(old.StorageDirs), dirs(given.StorageDirs))
	return out
}

// WriteInit writes cfg (with a fresh uid) into root through fs, creating
// root. If root already holds a config with the same host, port, capacity
// and storage dirs it is kept and returned (existed=true); a different one
// is refused with an *InitConflictError (errors.Is ErrInitConflict).
func WriteInit(fs files.FS, root string, cfg InitConfig) (out InitConfig, existed bool, err error) {
	if err := cfg.Validate(); err != nil {
		return cfg, false, err
	}
	if err := fs.MkdirAll(root, 0o755); err != nil {
		return cfg, false, err
	}
	path := filepath.Join(root, InitFile)
	if old, err := LoadInit(fs, root); err == nil {
		diffs := initDiffs(old, cfg)
		if len(diffs) == 0 {
			return old, true, nil
		}
		return old, true, &InitConflictError{Path: path, Diffs: diffs}
	} else if !files.IsNotExist(err) {
		return cfg, false, err
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	cfg.UID, cfg.Created = hex.EncodeToString(b[:]), time.Now().UTC().Truncate(time.Second)
	return cfg, false, files.WriteJSON(fs, path, cfg)
}

// LoadInit reads ROOT/config.json through fs. A missing file is an error
// for which files.IsNotExist holds; a corrupt one wraps files.ErrCorrupt.
func LoadInit(fs files.FS, root string) (InitConfig, error) {
	var c InitConfig
	if err := readChecked(fs, filepath.Join(root, InitFile), &c); err != nil {
		return c, err
	}
	if c.UID == "" {
		return c, fmt.Errorf("%s has no uid; recreate it with cairn sn init", filepath.Join(root, InitFile))
	}
	return c, c.Validate()
}
