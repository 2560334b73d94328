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
	} {
		c := DefaultSNConfig("/tmp/root")
		tc.modify(&c)
		err := c.Validate()
		if tc.bad == "" && err != nil || tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tc.name, err, tc.bad)
		}
	}
}
