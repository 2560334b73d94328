package node

import (
	"strings"
	"testing"
	"time"
)

// TestLiteConfigGroupWait: --sync-group-wait takes 0 (off) up to
// MaxGroupWait; anything else is refused, naming the flag.
func TestLiteConfigGroupWait(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		ok   bool
	}{{0, true}, {time.Millisecond, true}, {MaxGroupWait, true}, {-time.Nanosecond, false}, {MaxGroupWait + time.Nanosecond, false}} {
		c := DefaultLiteConfig(t.TempDir())
		c.Replica.GroupWait = tc.wait
		err := c.Validate()
		if tc.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "sync-group-wait")) {
			t.Errorf("GroupWait %v: Validate() = %v, want ok=%v (an error naming sync-group-wait)", tc.wait, err, tc.ok)
		}
	}
}
