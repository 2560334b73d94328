package node

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
)

// A storage node made with `cairn sn init` keeps its boot config in its
// root, readable and editable by an operator while it is stopped:
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

// WriteInit writes cfg (with a fresh uid) into root, creating it. If root
// already holds a config with the same host, port, capacity and storage
// dirs it is kept and returned (existed=true); a different one is refused
// with an *InitConflictError (errors.Is ErrInitConflict).
func WriteInit(root string, cfg InitConfig) (out InitConfig, existed bool, err error) {
	if err := cfg.Validate(); err != nil {
		return cfg, false, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return cfg, false, err
	}
	path := filepath.Join(root, InitFile)
	if old, err := LoadInit(root); err == nil {
		diffs := initDiffs(old, cfg)
		if len(diffs) == 0 {
			return old, true, nil
		}
		return old, true, &InitConflictError{Path: path, Diffs: diffs}
	} else if !errors.Is(err, os.ErrNotExist) {
		return cfg, false, err
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	cfg.UID, cfg.Created = hex.EncodeToString(b[:]), time.Now().UTC().Truncate(time.Second)
	data, _ := json.MarshalIndent(cfg, "", "  ")
	return cfg, false, writeFileAtomic(path, append(data, '\n'))
}

// LoadInit reads ROOT/config.json. A missing file is an error wrapping
// os.ErrNotExist.
func LoadInit(root string) (InitConfig, error) {
	var c InitConfig
	b, err := os.ReadFile(filepath.Join(root, InitFile))
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s is not a storage node config: %w", filepath.Join(root, InitFile), err)
	}
	if c.UID == "" {
		return c, fmt.Errorf("%s has no uid; recreate it with cairn sn init", filepath.Join(root, InitFile))
	}
	return c, c.Validate()
}

// writeFileAtomic writes data to path through a synced temporary file and a
// rename, then syncs the directory.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
