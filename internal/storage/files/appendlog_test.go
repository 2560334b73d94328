package files

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestAppendLogAppendsReopensAndRotates(t *testing.T) {
	fs := vfs.NewMem()
	l, err := OpenAppendLog(fs, "audit.log", 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := l.Append([]byte(fmt.Sprintf("line %d\n", i))); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	l, err = OpenAppendLog(fs, "audit.log", 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]byte("after reopen\n")); err != nil {
		t.Fatal(err)
	}
	b, _ := ReadFile(fs, "audit.log")
	if string(b) != "line 0\nline 1\nline 2\nafter reopen\n" {
		t.Fatalf("log = %q", b)
	}
	// 30-byte records: every fourth starts a new file; two old ones kept.
	rec := strings.Repeat("x", 29) + "\n"
	for range 20 {
		if err := l.Append([]byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	for _, name := range []string{"audit.log", "audit.log.1", "audit.log.2"} {
		b, err := ReadFile(fs, name)
		if err != nil || len(b) == 0 || len(b) > 100 {
			t.Errorf("%s: %d bytes, %v", name, len(b), err)
		}
	}
	if _, err := fs.Stat("audit.log.3"); err == nil {
		t.Error("audit.log.3 kept; keep is 2")
	}
	if err := l.Append([]byte("x")); err == nil {
		t.Error("append after close succeeded")
	}
}
