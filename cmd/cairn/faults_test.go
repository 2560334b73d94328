package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/exitcode"
	"github.com/cairndb/cairn/internal/storage/files"
)

// TestNodeFS: without CAIRN_FAULTS a node's files go to the disk as they
// are; with it they go through the faults, logged once; a bad spec is a
// usage error naming the bad part.
func TestNodeFS(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	t.Setenv(faultsEnv, "")
	if fs, err := nodeFS(logger); err != nil || fs != files.Default || log.Len() > 0 {
		t.Fatalf("CAIRN_FAULTS empty: %v, %v, log %q; want files.Default and no log", fs, err, log.String())
	}
	t.Setenv(faultsEnv, "op=sync,path=*.log,after=2")
	if fs, err := nodeFS(logger); err != nil || fs == files.Default {
		t.Fatalf("CAIRN_FAULTS set: %v, %v; want a faulty FS", fs, err)
	}
	if want := `msg="CAIRN_FAULTS is set: injecting storage faults (testing only): op=sync,path=*.log,after=2"`; strings.Count(log.String(), want) != 1 {
		t.Errorf("log %q, want one line with %s", log.String(), want)
	}
	t.Setenv(faultsEnv, "op=sync,path=*.log;op=fsync,path=x")
	_, err := nodeFS(logger)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitcode.Usage || !strings.Contains(err.Error(), `CAIRN_FAULTS: fault rule 2 "op=fsync,path=x": op=fsync`) {
		t.Fatalf("bad spec: %v, want a usage error naming rule 2", err)
	}
}

// TestFaultsInCommands: every command that runs a node or writes its
// files takes CAIRN_FAULTS: a bad spec exits 2 before anything is done,
// and an injected fault makes the command fail, saying so.
func TestFaultsInCommands(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		spec string
		args []string
		code int
		want string // in stderr
	}{
		{"op=bogus,path=x", []string{"lite", "--root", filepath.Join(dir, "l"), "--port", "0"}, 2, `cairn: CAIRN_FAULTS: fault rule 1 "op=bogus,path=x": op=bogus`},
		{"op=sync", []string{"sn", "--root", filepath.Join(dir, "s"), "--port", "0"}, 2, "cairn: CAIRN_FAULTS: fault rule 1 \"op=sync\": path= is required"},
		{"path=x", []string{"sn", "start", "--root", filepath.Join(dir, "s")}, 2, "cairn: CAIRN_FAULTS: "},
		{"path=x", []string{"sn", "init", "--root", filepath.Join(dir, "i"), "--port", "1"}, 2, "cairn: CAIRN_FAULTS: "},
		{"path=x", []string{"sn", "restore", "--root", filepath.Join(dir, "i"), "--snapshot", "s1"}, 2, "cairn: CAIRN_FAULTS: "},
		{"op=any,path=data", []string{"lite", "--root", filepath.Join(dir, "l"), "--port", "0"}, 1, `(injected fault, rule "op=any,path=data")`},
		{"op=create,path=config.json", []string{"sn", "init", "--root", filepath.Join(dir, "i"), "--port", "1"}, 1, "input/output error (injected fault"},
	} {
		t.Setenv(faultsEnv, tc.spec)
		var stderr bytes.Buffer
		code := run(tc.args, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("CAIRN_FAULTS=%q cairn %s: exit %d, stderr %q; want exit %d with %q",
				tc.spec, strings.Join(tc.args, " "), code, stderr.String(), tc.code, tc.want)
		}
	}
	for _, left := range []string{"l/data", "i/config.json", "s"} {
		if _, err := os.Stat(filepath.Join(dir, left)); !os.IsNotExist(err) {
			t.Errorf("%s exists after the refused commands (%v)", left, err)
		}
	}
}
