package main

import (
	"errors"
	"time"

	"github.com/spf13/pflag"

	"github.com/cairndb/cairn/internal/node"
	"github.com/cairndb/cairn/internal/storage"
)

// nodeTuning points at the fields of a node config (node.LiteConfig or
// node.SNConfig) that the tuning flags shared by cairn lite, cairn sn and
// cairn sn start set, and at the --log-level value.
type nodeTuning struct {
	cacheBytes, rowCacheBytes, minFreeBytes *int64
	shutdownGrace                           *time.Duration
	streamWorkers, gcPercent                *int
	noHTTP                                  *bool
	pprofAddr, logLevel                     *string
	scrub                                   *node.ScrubConfig
}

// addNodeTuningFlags adds the shared tuning flags to f. The defaults are
// the fields' current values (--log-level: info; --pprof: off).
func addNodeTuningFlags(f *pflag.FlagSet, t nodeTuning) {
	f.Var(byteSize{t.cacheBytes}, "cache-bytes", "block cache size (bytes, or with a unit: 256MiB, 1GiB)")
	f.Var(byteSize{t.rowCacheBytes}, "row-cache-bytes", "row cache size: records kept in memory for gets and whole-major-path multi-gets, in front of the block cache (0: off; else at least 32MiB)")
	f.Var(byteSize{t.minFreeBytes}, "min-free-bytes", "free disk space kept in reserve: puts that would take free space below it are refused with disk_full (bytes, or 64MiB, 1GiB)")
	f.DurationVar(t.shutdownGrace, "shutdown-grace", *t.shutdownGrace, "how long shutdown waits for in-flight requests")
	f.IntVar(t.streamWorkers, "stream-workers", *t.streamWorkers, "goroutines kept to run requests (0: one new goroutine per request)")
	f.IntVar(t.gcPercent, "gc-percent", *t.gcPercent, "Go GC percent for this process (0: the runtime's; the GOGC environment variable wins)")
	f.BoolVar(t.noHTTP, "no-http", false, "serve gRPC only on the port: no HTTP/JSON API, no web console (storage nodes serve one at /console) and no call socket (docs/design/20261127_every_language.md, docs/design/20261128_call_socket.md)")
	f.StringVar(t.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(t.pprofAddr, "pprof", "", "serve Go profiles (/debug/pprof/) and Prometheus metrics (/metrics) on this host:port, a listener of its own (default off; use loopback)")
	f.Var(byteSize{&t.scrub.Rate}, "scrub-rate", "background scrub: read every sstable block, the MANIFEST and the WALs at this many bytes per second (or 8MiB...), checking checksums (0: off)")
	f.DurationVar(&t.scrub.Interval, "scrub-interval", t.scrub.Interval, "background scrub: pause between the end of a pass and the start of the next")
}

// startError gives an error from starting a node its exit code: a config
// that Validate rejects, or a root that holds another store, is a usage
// error; anything else is exit status 1.
func startError(err error, invalid bool) error {
	if invalid || errors.Is(err, storage.ErrStoreMismatch) {
		return usageErr("%v", err)
	}
	return err
}
