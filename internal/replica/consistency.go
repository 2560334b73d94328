package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairndb/cairn/internal/storage"
)

// ErrConsistency is returned (wrapped) when a replica cannot meet a read's
// consistency within its timeout. Retrying later, or elsewhere, may succeed.
var ErrConsistency = errors.New("replica: consistency requirement not met in time")

// ErrForeignVersion is returned (wrapped) for a VERSION read whose version
// was not made by this shard, nor by a shard the key's partition moved
// from: another shard's (of the same store) or another store's.
var ErrForeignVersion = errors.New("replica: the version was made by another shard or another store; " +
	"a VERSION read takes a version that a write to the same shard returned (one of the same major path always is)")

// ConsistencyKind mirrors the wire's consistency kinds.
type ConsistencyKind int

// The consistency kinds.
const (
	NoneRequired ConsistencyKind = iota
	Absolute
	TimeLag
	AtVersion
)

// Consistency is a read's freshness requirement.
type Consistency struct {
	Kind ConsistencyKind
	// Lag is TimeLag's permissible lag behind the leader.
	Lag time.Duration
	// Version is AtVersion's version, as returned by a write.
	Version []byte
	// Timeout bounds the wait for the replica to catch up; 0 means until ctx ends.
	Timeout time.Duration
}

// ReadReady returns nil once this replica may serve a read under c. A single
// replica is its own leader, so ABSOLUTE, NONE_REQUIRED and TIME_LAG are
// always met; AtVersion waits until the write that made the version is
// applied.
func (l *Local) ReadReady(ctx context.Context, c Consistency) error {
	if l.failed.Load() {
		return ErrClosed
	}
	if c.Kind != AtVersion {
		return nil
	}
	origin, index, err := storage.ParseVersion(c.Version)
	if err != nil {
		return err
	}
	if origin != l.meta.Origin {
		return fmt.Errorf("%w: version origin %016x, this store's is %016x", ErrForeignVersion, origin, l.meta.Origin)
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	for {
		wait := l.waitChan()
		if l.applied.Load() >= index {
			return nil
		}
		select {
		case <-wait:
		case <-l.closing:
			return ErrClosed
		case <-ctx.Done():
			return fmt.Errorf("%w: waited for index %d, applied %d", ErrConsistency, index, l.applied.Load())
		}
	}
}
