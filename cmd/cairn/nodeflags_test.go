package main

import (
	"strconv"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cairndb/cairn/internal/node"
	"github.com/cairndb/cairn/internal/storage"
)

// TestNodeTuningFlags: cairn lite, cairn sn and cairn sn start take the
// shared tuning flags, with their config's defaults.
func TestNodeTuningFlags(t *testing.T) {
	lite, sn := node.DefaultLiteConfig(""), node.DefaultSNConfig("")
	shared := func(cache, minFree int64, grace string, workers, gc int) map[string]string {
		rows := int64(storage.DefaultRowCacheBytes)
		return map[string]string{
			"cache-bytes": byteSize{&cache}.String(), "row-cache-bytes": byteSize{&rows}.String(), "min-free-bytes": byteSize{&minFree}.String(),
			"shutdown-grace": grace, "stream-workers": strconv.Itoa(workers), "gc-percent": strconv.Itoa(gc),
			"log-level": "info", "pprof": "", "scrub-rate": "0", "scrub-interval": "24h0m0s",
		}
	}
	liteWant := shared(lite.CacheBytes, lite.MinFreeBytes, lite.ShutdownGrace.String(), lite.StreamWorkers, lite.GCPercent)
	snWant := shared(sn.CacheBytes, sn.MinFreeBytes, sn.ShutdownGrace.String(), sn.StreamWorkers, sn.GCPercent)
	snWant["raft-tick"], snWant["raft-log-keep"] = sn.TickInterval.String(), strconv.FormatUint(sn.LogKeep, 10)

	snCmd := newSNCmd()
	start, _, err := snCmd.Find([]string{"start"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cmd  *cobra.Command
		want map[string]string
	}{
		{"lite", newLiteCmd(), liteWant},
		{"sn", snCmd, snWant},
		{"sn start", start, snWant},
	} {
		for name, def := range tc.want {
			if f := tc.cmd.Flags().Lookup(name); f == nil || f.DefValue != def {
				t.Errorf("cairn %s --%s: %v, want one with default %q", tc.name, name, f, def)
			}
		}
	}
}
