package files

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// WithFaults returns fs wrapped so that the operations spec names fail
// (see "Injected faults" in the package doc). It is for tests: cmd/cairn
// calls it with CAIRN_FAULTS. A spec that does not parse is an error naming
// the bad rule and what is wrong with it.
func WithFaults(fs FS, spec string) (FS, error) {
	rules, err := parseFaults(spec)
	if err != nil {
		return nil, err
	}
	inj := &injector{spec: spec, rules: rules}
	return &faultFS{FS: errorfs.Wrap(fs, inj), base: fs, inj: inj}, nil
}

// opClasses are the op= values and the errorfs operations each covers.
var opClasses = map[string][]errorfs.OpKind{
	"write":  {errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFilePreallocate},
	"sync":   {errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo},
	"create": {errorfs.OpCreate, errorfs.OpReuseForWrite},
	"rename": {errorfs.OpRename},
	"remove": {errorfs.OpRemove, errorfs.OpRemoveAll},
	"read":   {errorfs.OpFileRead, errorfs.OpFileReadAt},
	"any":    nil, // every operation
}

// opNames name operations in injected errors.
var opNames = map[errorfs.OpKind]string{
	errorfs.OpCreate: "create", errorfs.OpLink: "link", errorfs.OpOpen: "open", errorfs.OpOpenDir: "open directory",
	errorfs.OpRemove: "remove", errorfs.OpRemoveAll: "remove all", errorfs.OpRename: "rename",
	errorfs.OpReuseForWrite: "reuse for write", errorfs.OpMkdirAll: "mkdir", errorfs.OpLock: "lock",
	errorfs.OpList: "list", errorfs.OpFilePreallocate: "preallocate", errorfs.OpStat: "stat",
	errorfs.OpGetDiskUsage: "statfs", errorfs.OpFileClose: "close", errorfs.OpFileRead: "read",
	errorfs.OpFileReadAt: "read", errorfs.OpFileWrite: "write", errorfs.OpFileWriteAt: "write",
	errorfs.OpFileStat: "stat", errorfs.OpFileSync: "fsync", errorfs.OpFileSyncData: "fdatasync",
	errorfs.OpFileSyncTo: "sync_file_range", errorfs.OpFileFlush: "flush",
}

var errnos = map[string]syscall.Errno{"EIO": syscall.EIO, "ENOSPC": syscall.ENOSPC}

// rule is one rule of a fault spec.
type rule struct {
	text  string           // as written
	kinds []errorfs.OpKind // nil: any
	glob  string           // matched against base names
	after int64            // matches that succeed before the failures begin
	errno syscall.Errno
	seen  atomic.Int64 // matching operations so far
}

func parseFaults(spec string) ([]*rule, error) {
	var rules []*rule
	for i, part := range strings.Split(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		r, err := parseRule(part)
		if err != nil {
			return nil, fmt.Errorf("fault rule %d %q: %w", i+1, part, err)
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("fault spec %q has no rule (want op=OP,path=GLOB[,after=N][,errno=EIO|ENOSPC], separated by ';')", spec)
	}
	return rules, nil
}

func parseRule(s string) (*rule, error) {
	r := &rule{text: s, errno: syscall.EIO}
	given := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%q is not key=value", strings.TrimSpace(kv))
		}
		if given[k] {
			return nil, fmt.Errorf("%s= given twice", k)
		}
		given[k] = true
		if err := r.set(k, v); err != nil {
			return nil, err
		}
	}
	switch {
	case !given["op"]:
		return nil, errors.New("op= is required (write, sync, create, rename, remove, read or any)")
	case !given["path"]:
		return nil, errors.New("path= is required (a glob matched against base names, e.g. *.log)")
	}
	return r, nil
}

// set applies key=value to r.
func (r *rule) set(k, v string) error {
	switch k {
	case "op":
		kinds, ok := opClasses[v]
		if !ok {
			return fmt.Errorf("op=%s: want write, sync, create, rename, remove, read or any", v)
		}
		r.kinds = kinds
	case "path":
		if strings.Contains(v, "/") {
			return fmt.Errorf("path=%s: a glob is matched against a file's base name, so it cannot hold '/'", v)
		}
		if _, err := filepath.Match(v, ""); err != nil {
			return fmt.Errorf("path=%s: %v", v, err)
		}
		r.glob = v
	case "after":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("after=%s: want a count of operations, 0 or more", v)
		}
		r.after = n
	case "errno":
		e, ok := errnos[v]
		if !ok {
			return fmt.Errorf("errno=%s: want EIO or ENOSPC", v)
		}
		r.errno = e
	default:
		return fmt.Errorf("unknown key %q (want op, path, after or errno)", k)
	}
	return nil
}

// matches reports whether an operation of kind on any of paths is r's.
func (r *rule) matches(kind errorfs.OpKind, paths []string) bool {
	if r.kinds != nil && !contains(r.kinds, kind) {
		return false
	}
	for _, p := range paths {
		base := filepath.Base(p)
		if r.match(base) || r.match(tempTarget(base)) {
			return true
		}
	}
	return false
}

func (r *rule) match(base string) bool {
	ok, _ := filepath.Match(r.glob, base)
	return ok && base != ""
}

func contains(kinds []errorfs.OpKind, k errorfs.OpKind) bool {
	for _, c := range kinds {
		if c == k {
			return true
		}
	}
	return false
}

// injector is the errorfs.Injector of a fault spec. Every rule counts
// every operation it matches; the first rule (in spec order) that is past
// its after= count fails the operation.
type injector struct {
	spec  string
	rules []*rule
}

func (in *injector) String() string { return in.spec }

// MaybeError implements errorfs.Injector.
func (in *injector) MaybeError(op errorfs.Op) error { return in.check(op.Kind, op.Path) }

func (in *injector) check(kind errorfs.OpKind, paths ...string) error {
	var fail error
	for _, r := range in.rules {
		if !r.matches(kind, paths) {
			continue
		}
		if n := r.seen.Add(1); n > r.after && fail == nil {
			fail = &faultError{rule: r.text, op: opNames[kind], path: strings.Join(paths, " -> "), errno: r.errno}
		}
	}
	return fail
}

// faultError is an injected failure. errors.Is(err, errno) holds.
type faultError struct {
	rule, op, path string
	errno          syscall.Errno
}

func (e *faultError) Error() string {
	return fmt.Sprintf("%s %s: %v (injected fault, rule %q)", e.op, e.path, e.errno, e.rule)
}

// Unwrap returns the errno.
func (e *faultError) Unwrap() error { return e.errno }

// faultFS is errorfs's FS with the two operations it does not check the
// way a fault spec needs: a rename matches its new name too, and a file
// reused for writing (a recycled WAL) has its writes and syncs checked
// under its new name.
type faultFS struct {
	*errorfs.FS
	base FS
	inj  *injector
}

func (fs *faultFS) Rename(oldname, newname string) error {
	if err := fs.inj.check(errorfs.OpRename, oldname, newname); err != nil {
		return err
	}
	return fs.base.Rename(oldname, newname)
}

func (fs *faultFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := fs.inj.check(errorfs.OpReuseForWrite, oldname, newname); err != nil {
		return nil, err
	}
	f, err := fs.base.ReuseForWrite(oldname, newname, c)
	if err != nil {
		return nil, err
	}
	return errorfs.WrapFile(f, pathInjector{inj: fs.inj, path: newname}), nil
}

// pathInjector checks a file's operations under its path (errorfs.WrapFile
// does not know it).
type pathInjector struct {
	inj  *injector
	path string
}

func (p pathInjector) String() string { return p.inj.String() }

func (p pathInjector) MaybeError(op errorfs.Op) error { return p.inj.check(op.Kind, p.path) }
