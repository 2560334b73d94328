package client

import (
	"fmt"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
)

// Consistency chooses which replica may serve a read and how fresh its data
// must be. Use Absolute, NoneRequired, TimeLag or AtVersion; the zero value
// means "the client's default" (Config.Consistency, itself NoneRequired by
// default).
type Consistency struct {
	kind    cairnpb.ConsistencyKind
	lag     time.Duration
	timeout time.Duration
	version Version
}

var (
	// Absolute reads are linearizable: the shard's leader serves them.
	Absolute = Consistency{kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE}
	// NoneRequired reads may be served by any replica, however stale.
	NoneRequired = Consistency{kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}
)

// TimeLag reads from a replica at most lag behind the leader. A replica that
// is further behind waits up to timeout to catch up (0: the server's
// default), then the read fails with ErrConsistency.
func TimeLag(lag, timeout time.Duration) Consistency {
	return Consistency{kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_TIME_LAG, lag: lag, timeout: timeout}
}

// AtVersion reads from a replica that has applied the write that produced v,
// so a client sees its own write. A replica that has not waits up to timeout
// (0: the server's default), then the read fails with ErrConsistency.
func AtVersion(v Version, timeout time.Duration) Consistency {
	return Consistency{kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_VERSION, version: v, timeout: timeout}
}

// IsZero reports whether c is the zero value, which means "the default".
func (c Consistency) IsZero() bool {
	return c.kind == cairnpb.ConsistencyKind_CONSISTENCY_KIND_UNSPECIFIED
}

func (c Consistency) String() string {
	switch c.kind {
	case cairnpb.ConsistencyKind_CONSISTENCY_KIND_UNSPECIFIED:
		return "DEFAULT"
	case cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE:
		return "ABSOLUTE"
	case cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED:
		return "NONE_REQUIRED"
	case cairnpb.ConsistencyKind_CONSISTENCY_KIND_TIME_LAG:
		return fmt.Sprintf("TIME_LAG(lag %v, timeout %v)", c.lag, c.timeout)
	case cairnpb.ConsistencyKind_CONSISTENCY_KIND_VERSION:
		return fmt.Sprintf("VERSION(%v, timeout %v)", c.version, c.timeout)
	}
	return fmt.Sprintf("Consistency(%d)", int(c.kind))
}

func (c Consistency) toPB() *cairnpb.Consistency {
	if c.IsZero() {
		return nil
	}
	return &cairnpb.Consistency{
		Kind:             c.kind,
		PermissibleLagMs: millis(c.lag),
		Version:          c.version,
		TimeoutMs:        millis(c.timeout),
	}
}

// millis converts d to whole milliseconds, rounding away from zero so that a
// sub-millisecond duration does not become 0 ("the default" or "never") and a
// negative one stays negative for the server to reject.
func millis(d time.Duration) int64 {
	switch {
	case d == 0:
		return 0
	case d < 0:
		return min(d.Milliseconds(), -1)
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
