package clustertest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// binary is the cairn binary under test, set by Main.
var binary string

// Main runs the tests of m with the cairn binary from $CAIRN_BIN or, if that
// is unset, one built from this module into a temporary directory (removed
// afterwards). Call it from TestMain; it exits the process.
func Main(m *testing.M) {
	flag.Parse()
	code, err := setupAndRun(m)
	if err != nil {
		fmt.Fprintf(os.Stderr, "clustertest: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setupAndRun(m *testing.M) (int, error) {
	if bin := os.Getenv("CAIRN_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return 0, fmt.Errorf("CAIRN_BIN: %w", err)
		}
		binary = bin
		return m.Run(), nil
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return 0, fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return 0, errors.New("go env GOMOD: not inside a module")
	}
	dir, err := os.MkdirTemp("", "cairn-clustertest-bin-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "cairn")
	build := exec.Command("go", "build", "-o", binary, "./cmd/cairn")
	build.Dir = filepath.Dir(gomod)
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build ./cmd/cairn: %w\n%s", err, out)
	}
	return m.Run(), nil
}

// Binary returns the cairn binary the cluster runs. It fails the test if
// Main did not run.
func Binary(t testing.TB) string {
	t.Helper()
	if binary == "" {
		t.Fatal("clustertest: no cairn binary; call clustertest.Main(m) from TestMain")
	}
	return binary
}
