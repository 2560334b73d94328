//go:build linux

package storage

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFdatasync measures what a durable commit's sync costs on this
// machine's disk, for the two ways a log file can be written: appended to
// as it grows (Redis's AOF, a fresh WAL), or overwritten in place (a WAL
// that Pebble recycled from an older one, whose blocks and size are
// already on disk). Each op is a 4 KiB write and an fdatasync; besides the
// latency (ns/op) it reports the process's CPU per sync (cpu-µs/op: the
// kernel's work for the sync, mostly). docs/benchmarks.md, "Issue 12,
// nineteenth".
func BenchmarkFdatasync(b *testing.B) {
	for _, mode := range []string{"append", "overwrite"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 4096)
			if mode == "overwrite" {
				for range b.N {
					if _, err := f.Write(buf); err != nil {
						b.Fatal(err)
					}
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				if _, err := f.Seek(0, 0); err != nil {
					b.Fatal(err)
				}
			}
			cpu0 := processCPU(b)
			b.ResetTimer()
			for range b.N {
				if _, err := f.Write(buf); err != nil {
					b.Fatal(err)
				}
				if err := syscall.Fdatasync(int(f.Fd())); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU is the CPU time, user and system, the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
