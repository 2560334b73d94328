package clustertest

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// Seed returns flagSeed, or a seed from the clock if it is 0, and logs it
// with the command that reruns the test with it. flagName is the test
// package's seed flag, e.g. "seed".
func Seed(t testing.TB, flagName string, flagSeed uint64) uint64 {
	t.Helper()
	seed := flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun: go test ./test/robustness/ -run '^%s$' -count=1 -v -%s=%d)", seed, t.Name(), flagName, seed)
	return seed
}

// Rand returns a generator for seed; stream separates independent uses of
// one seed (e.g. one per workload goroutine).
func Rand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

var (
	artifactMu   sync.Mutex
	artifactDirs = map[string]string{}
)

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// ArtifactDir returns the directory for this test's failure artifacts
// (porcupine visualizations, histories, node logs): $CAIRN_ARTIFACTS/<test>
// if the variable is set, else a directory under the system's temporary
// directory that outlives the test, so what a failure left can be read.
func ArtifactDir(t testing.TB) string {
	artifactMu.Lock()
	defer artifactMu.Unlock()
	if d, ok := artifactDirs[t.Name()]; ok {
		return d
	}
	name := unsafeName.ReplaceAllString(t.Name(), "_")
	var dir string
	var err error
	if base := os.Getenv("CAIRN_ARTIFACTS"); base != "" {
		dir = filepath.Join(base, name)
		err = os.MkdirAll(dir, 0o755)
	} else {
		dir, err = os.MkdirTemp("", "cairn-artifacts-"+name+"-")
	}
	if err != nil {
		t.Errorf("artifact dir: %v", err)
		dir = os.TempDir()
	}
	artifactDirs[t.Name()] = dir
	t.Logf("artifacts: %s", dir)
	return dir
}

// WriteArtifact writes data to name in the test's artifact directory and
// returns the path.
func WriteArtifact(t testing.TB, name string, data []byte) string {
	path := filepath.Join(ArtifactDir(t), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Errorf("write artifact %s: %v", path, err)
	}
	return path
}
