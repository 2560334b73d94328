//go:build unix

package chromiumtest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Path is where Debian's chromium package puts the browser.
const Path = "/usr/bin/chromium"

// Deadline bounds one browser invocation; it is killed after it.
const Deadline = 90 * time.Second

// ArtifactDir returns the directory for t's artifacts (files worth keeping
// after a run, like screenshots): $CAIRN_ARTIFACTS/<test name> when
// CAIRN_ARTIFACTS is set, else a temporary directory removed after the
// test. It logs the path.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	root := os.Getenv("CAIRN_ARTIFACTS")
	if root == "" {
		dir := t.TempDir()
		t.Logf("artifacts: %s (removed after the test; set CAIRN_ARTIFACTS to keep them)", dir)
		return dir
	}
	name := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(t.Name(), "_")
	dir, err := filepath.Abs(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts: %v", err)
	}
	t.Logf("artifacts: %s", dir)
	return dir
}

// Require skips t when Chromium is not installed, except on CI (CI=true),
// which installs it, so its absence there is a failure.
func Require(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing on CI (install the chromium package): %v", Path, err)
		}
		t.Skipf("%s is not installed (apt-get install chromium): %v", Path, err)
	}
}

// Run runs headless Chromium with a fresh profile and returns its stdout.
// It kills the browser's whole process group when it overruns Deadline.
func Run(t testing.TB, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	defer cancel()
	profile, err := os.MkdirTemp("", "cairn-chromium-profile-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	full := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1",
		"--user-data-dir=" + profile,
	}, args...)
	cmd := exec.CommandContext(ctx, Path, full...)
	// Chromium forks helpers (zygote, renderer, GPU); put them all in one
	// process group so a timeout kills every one of them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("chromium overran its %v deadline and was killed; stderr:\n%s", Deadline, tail(stderr.String()))
	}
	if err != nil {
		t.Fatalf("chromium %v: %v; stderr:\n%s", args, err, tail(stderr.String()))
	}
	return stdout.Bytes()
}

// tail returns the last lines of s, for error messages.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}
