package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/cairndb/cairn/client"
)

// norm lowercases a flag word and accepts '-' for '_'.
func norm(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
}

// ParseSync reads a sync policy: sync, write_no_sync or no_sync.
func ParseSync(s string) (client.SyncPolicy, error) {
	switch norm(s) {
	case "sync":
		return client.Sync, nil
	case "write_no_sync":
		return client.WriteNoSync, nil
	case "no_sync":
		return client.NoSync, nil
	}
	hint := ""
	switch norm(s) {
	case "all", "simple_majority", "majority", "none":
		hint = fmt.Sprintf("; %s is an ack policy: give it with --ack %s", s, norm(s))
	}
	return 0, Usagef("--durability: %q is not a sync policy (want sync, write_no_sync or no_sync)%s", s, hint)
}

// ParseDurability reads --durability and --ack. durability is MASTER or
// MASTER,REPLICA (sync policies); ack is all, simple_majority or none. Empty
// strings keep the defaults.
func ParseDurability(durability, ack string) (client.Durability, error) {
	var d client.Durability
	if durability != "" {
		master, replica, two := strings.Cut(durability, ",")
		if strings.Contains(replica, ",") {
			return d, Usagef("--durability: %q has more than two policies (want MASTER or MASTER,REPLICA, like sync,no_sync)", durability)
		}
		var err error
		if d.MasterSync, err = ParseSync(master); err != nil {
			return d, err
		}
		if two {
			if d.ReplicaSync, err = ParseSync(replica); err != nil {
				return d, err
			}
		}
	}
	switch norm(ack) {
	case "":
	case "all":
		d.ReplicaAck = client.AckAll
	case "simple_majority", "majority":
		d.ReplicaAck = client.AckSimpleMajority
	case "none":
		d.ReplicaAck = client.AckNone
	default:
		return d, Usagef("--ack: %q is not an ack policy (want all, simple_majority or none)", ack)
	}
	return d, nil
}

// ParseConsistency reads --consistency: absolute, none_required,
// time_lag=LAG (a Go duration) or version=HEX. An empty string keeps the
// default.
func ParseConsistency(s string) (client.Consistency, error) {
	name, arg, hasArg := strings.Cut(s, "=")
	switch n := norm(name); {
	case n == "" && !hasArg:
		return client.Consistency{}, nil
	case n == "absolute" && !hasArg:
		return client.Absolute, nil
	case n == "none_required" && !hasArg:
		return client.NoneRequired, nil
	case n == "time_lag" && hasArg:
		lag, err := time.ParseDuration(arg)
		if err != nil || lag < 0 {
			return client.Consistency{}, Usagef("--consistency: time_lag=%q is not a non-negative duration like 2s", arg)
		}
		return client.TimeLag(lag, 0), nil
	case n == "version" && hasArg:
		v, err := client.ParseVersion(arg)
		if err != nil {
			return client.Consistency{}, Usagef("--consistency: version=%q is not a hex version", arg)
		}
		return client.AtVersion(v, 0), nil
	}
	return client.Consistency{}, Usagef("--consistency: %q is not a consistency (want absolute, none_required, time_lag=LAG or version=HEX)", s)
}

// ParseDepth reads --depth: children_only, parent_and_children,
// descendants_only or parent_and_descendants. Empty means the default,
// parent_and_descendants.
func ParseDepth(s string) (client.Depth, error) {
	switch norm(s) {
	case "":
		return 0, nil
	case "children_only":
		return client.ChildrenOnly, nil
	case "parent_and_children":
		return client.ParentAndChildren, nil
	case "descendants_only":
		return client.DescendantsOnly, nil
	case "parent_and_descendants":
		return client.ParentAndDescendants, nil
	}
	return 0, Usagef("--depth: %q is not a depth (want children_only, parent_and_children, descendants_only or parent_and_descendants)", s)
}

// ParseVersion reads a hex version given to flag.
func ParseVersion(flag, s string) (client.Version, error) {
	v, err := client.ParseVersion(s)
	if err != nil {
		return nil, Usagef("%s: %q is not a hex version (as printed by put)", flag, s)
	}
	return v, nil
}

// RangeFlags are --start, --end and --prefix with their modifiers. Has*
// records whether a flag was given, so an empty value is a real bound.
// Bounds are inclusive unless --start-exclusive / --end-exclusive.
type RangeFlags struct {
	Start, End, Prefix           string
	HasStart, HasEnd, HasPrefix  bool
	StartExclusive, EndExclusive bool
}

// Range builds the key range, or nil when no range flag was given.
func (f RangeFlags) Range() (*client.KeyRange, error) {
	switch {
	case f.HasPrefix && (f.HasStart || f.HasEnd):
		return nil, Usagef("--prefix cannot be combined with --start or --end")
	case f.StartExclusive && !f.HasStart:
		return nil, Usagef("--start-exclusive needs --start")
	case f.EndExclusive && !f.HasEnd:
		return nil, Usagef("--end-exclusive needs --end")
	case f.HasStart && f.HasEnd && f.Start > f.End:
		return nil, Usagef("--start %q is after --end %q", f.Start, f.End)
	case f.HasPrefix:
		return client.Prefix(f.Prefix), nil
	case f.HasStart && f.HasEnd:
		return client.Between(f.Start, !f.StartExclusive, f.End, !f.EndExclusive), nil
	case f.HasStart:
		return client.From(f.Start, !f.StartExclusive), nil
	case f.HasEnd:
		return client.To(f.End, !f.EndExclusive), nil
	}
	return nil, nil
}

// ParseParent reads the optional parent of scan and count: "" or "/" is the
// whole store; otherwise a major path, possibly partial, with no minor part.
func ParseParent(s string) (*client.Key, error) {
	if s == "" || s == "/" {
		return nil, nil
	}
	k, err := client.ParseKey(s)
	if err != nil {
		return nil, err
	}
	if len(k.Minor) > 0 {
		return nil, Usagef("parent %s has a minor path; scan and count take a (possibly partial) major path like /users", s)
	}
	return &k, nil
}
