package files

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// TestParseFaults: the spec syntax of the package doc, and a message
// naming the bad part of a bad spec.
func TestParseFaults(t *testing.T) {
	type parsed struct {
		kinds []errorfs.OpKind
		glob  string
		after int64
		errno syscall.Errno
	}
	for _, tc := range []struct {
		spec string
		want []parsed
		err  string // "" : the spec is good
	}{
		{spec: "op=sync,path=*.log", want: []parsed{{opClasses["sync"], "*.log", 0, syscall.EIO}}},
		{spec: " op = write , path = MANIFEST-* , after = 3 , errno = ENOSPC ", want: []parsed{{opClasses["write"], "MANIFEST-*", 3, syscall.ENOSPC}}},
		{spec: "errno=EIO,after=0,path=cairn-state.json,op=any", want: []parsed{{nil, "cairn-state.json", 0, syscall.EIO}}},
		{spec: "op=create,path=*.sst;op=rename,path=*;op=remove,path=x;op=read,path=y;", want: []parsed{
			{opClasses["create"], "*.sst", 0, syscall.EIO}, {opClasses["rename"], "*", 0, syscall.EIO},
			{opClasses["remove"], "x", 0, syscall.EIO}, {opClasses["read"], "y", 0, syscall.EIO}}},
		{spec: "", err: "has no rule"},
		{spec: " ; ", err: "has no rule"},
		{spec: "op=sync", err: `fault rule 1 "op=sync": path= is required`},
		{spec: "path=*.log", err: "op= is required"},
		{spec: "op=sync,path=*.log;op=fsync,path=*.log", err: `fault rule 2 "op=fsync,path=*.log": op=fsync: want write, sync, create, rename, remove, read or any`},
		{spec: "op=sync,path=[", err: "path=[: syntax error in pattern"},
		{spec: "op=sync,path=*.log,after=-1", err: "after=-1: want a count"},
		{spec: "op=sync,path=*.log,after=x", err: "after=x: want a count"},
		{spec: "op=sync,path=*.log,errno=EPERM", err: "errno=EPERM: want EIO or ENOSPC"},
		{spec: "op=sync,path=*.log,errno=eio", err: "errno=eio: want EIO or ENOSPC"},
		{spec: "op=sync,path=*.log,when=now", err: `unknown key "when"`},
		{spec: "op=sync,path=*.log,op=write", err: "op= given twice"},
		{spec: "op=sync,path=*.log,after", err: `"after" is not key=value`},
		{spec: "op=sync,path=", err: `"path=" is not key=value`},
		{spec: "op=sync,,path=x", err: `"" is not key=value`},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			rules, err := parseFaults(tc.spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error with %q", err, tc.err)
				}
				if _, werr := WithFaults(vfs.NewMem(), tc.spec); werr == nil {
					t.Fatal("WithFaults took the spec")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []parsed
			for _, r := range rules {
				got = append(got, parsed{r.kinds, r.glob, r.after, r.errno})
			}
			if !slices.EqualFunc(got, tc.want, func(a, b parsed) bool {
				return slices.Equal(a.kinds, b.kinds) && a.glob == b.glob && a.after == b.after && a.errno == b.errno
			}) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// memWith returns a MemFS holding /d/a.log and /d/b.txt.
func memWith(t *testing.T) *vfs.MemFS {
	t.Helper()
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/d/a.log", "/d/b.txt"} {
		if err := WriteAtomic(fs, p, []byte("content")); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// TestFaultOps runs each op class twice on a matching file under
// after=1, and once on a file the glob does not match: only the second
// matching operation fails, with the errno, saying it was injected.
func TestFaultOps(t *testing.T) {
	open := func(fs FS, p string) (vfs.File, error) { return fs.OpenReadWrite(p, vfs.WriteCategoryUnspecified) }
	withFile := func(use func(vfs.File) error) func(FS, string) error {
		return func(fs FS, p string) error {
			f, err := open(fs, p)
			if err != nil {
				return err
			}
			defer f.Close()
			return use(f)
		}
	}
	n := 0
	fresh := func() string { n++; return string(rune('0' + n)) }
	for _, tc := range []struct {
		op string
		do func(fs FS, path string) error // path: /d/a.log or /d/b.txt
	}{
		{"write", withFile(func(f vfs.File) error { _, err := f.Write([]byte("x")); return err })},
		{"write", withFile(func(f vfs.File) error { _, err := f.WriteAt([]byte("x"), 3); return err })},
		{"write", withFile(func(f vfs.File) error { return f.Preallocate(0, 10) })},
		{"sync", withFile(func(f vfs.File) error { return f.Sync() })},
		{"sync", withFile(func(f vfs.File) error { return f.SyncData() })},
		{"sync", withFile(func(f vfs.File) error { _, err := f.SyncTo(1); return err })},
		{"create", func(fs FS, p string) error {
			f, err := fs.Create(p, vfs.WriteCategoryUnspecified)
			if err == nil {
				err = f.Close()
			}
			return err
		}},
		{"create", func(fs FS, p string) error {
			old := "/d/old" + fresh()
			if err := WriteAtomic(fs, old, nil); err != nil {
				return err
			}
			f, err := fs.ReuseForWrite(old, p, vfs.WriteCategoryUnspecified)
			if err == nil {
				err = f.Close()
			}
			return err
		}},
		{"rename", func(fs FS, p string) error { return fs.Rename(p, p) }},
		{"remove", func(fs FS, p string) error {
			if err := WriteAtomic(vfs.Root(fs), p, []byte("again")); err != nil {
				return err
			}
			return fs.Remove(p)
		}},
		{"read", withFile(func(f vfs.File) error { _, err := f.Read(make([]byte, 2)); return err })},
		{"read", withFile(func(f vfs.File) error { _, err := f.ReadAt(make([]byte, 2), 1); return err })},
		{"any", func(fs FS, p string) error { _, err := fs.Stat(p); return err }},
	} {
		t.Run(tc.op, func(t *testing.T) {
			fs, err := WithFaults(memWith(t), "op="+tc.op+",path=*.log,after=1")
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.do(fs, "/d/a.log"); err != nil {
				t.Fatalf("the first matching %s failed: %v", tc.op, err)
			}
			for range 2 {
				err := tc.do(fs, "/d/a.log")
				if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "injected fault") || !strings.Contains(err.Error(), "a.log") {
					t.Fatalf("the second matching %s: %v, want an injected EIO naming a.log", tc.op, err)
				}
			}
			if err := tc.do(fs, "/d/b.txt"); err != nil {
				t.Fatalf("a %s of a file the glob does not match failed: %v", tc.op, err)
			}
		})
	}
}

// TestFaultPaths: ENOSPC; a rename matches its new name; a recycled file's
// writes match its new name; an atomic write's temporary file matches as
// the file it replaces; the first failing rule is named.
func TestFaultPaths(t *testing.T) {
	fs, err := WithFaults(memWith(t), "op=write,path=m.json,errno=ENOSPC;op=rename,path=*.sst;op=sync,path=*.log")
	if err != nil {
		t.Fatal(err)
	}
	err = WriteJSON(fs, "/d/m.json", want)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), `rule "op=write,path=m.json,errno=ENOSPC"`) {
		t.Fatalf("WriteJSON of m.json: %v, want an injected ENOSPC", err)
	}
	if names, _ := fs.List("/d"); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "m.json") }) {
		t.Fatalf("the failed write left %v", names)
	}
	if err := WriteJSON(fs, "/d/n.json", want); err != nil {
		t.Fatalf("WriteJSON of n.json: %v", err)
	}
	if err := fs.Rename("/d/b.txt", "/d/000001.sst"); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "rename /d/b.txt -> /d/000001.sst") {
		t.Fatalf("rename to an .sst: %v, want an injected EIO", err)
	}
	f, err := fs.ReuseForWrite("/d/b.txt", "/d/000002.log", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "fsync /d/000002.log") {
		t.Fatalf("sync of a recycled log: %v, want an injected EIO", err)
	}
	if _, err := ReadFile(fs, "/d/a.log"); err != nil {
		t.Fatalf("reading a.log, which no rule matches: %v", err)
	}
}

// TestTempTarget: only names made by tempName map back to their file.
func TestTempTarget(t *testing.T) {
	for in, want := range map[string]string{
		"m.json.0123456789abcdef.tmp": "m.json",
		"m.json.0123456789abcdeF.tmp": "",
		"m.json.0123456789abcde.tmp":  "",
		"m.json.tmp":                  "",
		".0123456789abcdef.tmp":       "",
		"x.0123456789abcdef.tmp.gz":   "",
	} {
		if got := tempTarget(in); got != want {
			t.Errorf("tempTarget(%q) = %q, want %q", in, got, want)
		}
	}
	if got := tempTarget(vfs.Default.PathBase(tempName("/a/m.json"))); got != "m.json" {
		t.Errorf("tempTarget(tempName(m.json)) = %q", got)
	}
}
