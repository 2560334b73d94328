package node

import (
	"strings"
	"testing"
	"time"
)

func TestSNConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*SNConfig)
		bad    string // substring of the error; "" = valid
	}{
		{"defaults", func(*SNConfig) {}, ""},
		{"no root", func(c *SNConfig) { c.Root = "" }, "root"},
		{"port", func(c *SNConfig) { c.Port = 70000 }, "port"},
		{"tick", func(c *SNConfig) { c.TickInterval = -time.Millisecond }, "raft-tick"},
		{"log keep", func(c *SNConfig) { c.LogKeep = 0 }, "raft-log-keep"},
		{"grace", func(c *SNConfig) { c.ShutdownGrace = -1 }, "shutdown-grace"},
		{"gc", func(c *SNConfig) { c.GCPercent = -1 }, "gc-percent"},
		{"workers", func(c *SNConfig) { c.StreamWorkers = -1 }, "stream-workers"},
		{"row cache too small", func(c *SNConfig) { c.RowCacheBytes = 1 << 20 }, "row-cache-bytes"},
		{"row cache off", func(c *SNConfig) { c.RowCacheBytes = 0 }, ""},
	} {
		c := DefaultSNConfig("/tmp/root")
		tc.modify(&c)
		err := c.Validate()
		if tc.bad == "" && err != nil || tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tc.name, err, tc.bad)
		}
	}
}

func TestLiteConfigRowCache(t *testing.T) {
	for _, tc := range []struct {
		bytes int64
		bad   bool
	}{{0, false}, {1 << 20, true}, {32 << 20, false}, {-1, true}} {
		c := DefaultLiteConfig(t.TempDir())
		c.RowCacheBytes = tc.bytes
		err := c.Validate()
		if tc.bad != (err != nil) || tc.bad && !strings.Contains(err.Error(), "row-cache-bytes") {
			t.Errorf("RowCacheBytes %d: Validate() = %v, want an error: %v", tc.bytes, err, tc.bad)
		}
	}
}
