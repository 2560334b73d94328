package admin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// downReplica is a replica that is not running, why, and what brings it
// back.
type downReplica struct {
	Name   string // rgN-rnM
	Reason string
	Fix    string
}

// replicaDown reports whether replica (shard, sn) is not running, and
// why. infos is describeAll's answer: a node missing from it does not
// answer. before is the id of the plan asking: a RUNNING stop-service plan
// with a smaller id runs first, so the replica it stops counts as down.
func replicaDown(m *Meta, shard, sn uint64, infos map[uint64]*controlpb.NodeInfo, before int) (downReplica, bool) {
	name := serviceName(shard, sn)
	d := downReplica{Name: name, Fix: "plan start-service -service " + name + " -wait"}
	if slices.Contains(m.Stopped, name) {
		d.Reason = "stopped by plan stop-service"
		return d, true
	}
	info := infos[sn]
	if info == nil {
		d.Reason = "its node " + snName(sn) + " does not answer"
		d.Fix = "start " + snName(sn) + " with cairn sn start --root DIR"
		return d, true
	}
	switch st := shardState(info, shard); {
	case st == nil:
		d.Reason = snName(sn) + " does not report it"
		d.Fix = "check verify configuration"
		return d, true
	case !st.GetRunning():
		d.Reason = "not running on " + snName(sn)
		return d, true
	}
	if p := stoppingPlan(m, name, before); p != nil {
		d.Reason = fmt.Sprintf("plan %d, which runs first, stops it", p.ID)
		d.Fix = fmt.Sprintf("plan interrupt -id %d, then plan cancel -id %d", p.ID, p.ID)
		return d, true
	}
	return d, false
}

// stoppingPlan returns the RUNNING stop-service plan with an id below
// before that stops service name, or nil.
func stoppingPlan(m *Meta, name string, before int) *Plan {
	for _, p := range m.Plans {
		if p.ID < before && p.State == Running && p.Name == "stop-service" && strings.EqualFold(p.Args["service"], name) {
			return p
		}
	}
	return nil
}

// checkMajority returns an error unless shard sh keeps a majority of its
// replicas running once its replica on node sn is stopped. Stopping a
// replica that is already down changes nothing and passes. before is as
// for replicaDown.
func checkMajority(m *Meta, sh topology.Shard, sn uint64, infos map[uint64]*controlpb.NodeInfo, before int) error {
	shard := uint64(sh.ID)
	if _, down := replicaDown(m, shard, sn, infos, before); down {
		return nil
	}
	var down []downReplica
	for _, r := range sh.Replicas {
		if uint64(r) == sn {
			continue
		}
		if d, ok := replicaDown(m, shard, uint64(r), infos, before); ok {
			down = append(down, d)
		}
	}
	need := len(sh.Replicas)/2 + 1
	running := len(sh.Replicas) - 1 - len(down)
	if running >= need {
		return nil
	}
	return majorityError(serviceName(shard, sn), topology.ShardName(sh.ID), running, len(sh.Replicas), need, down)
}

// majorityError says that stopping target would leave its shard without a
// majority, which replicas are down, and what to do.
func majorityError(target, shard string, running, replicas, need int, down []downReplica) error {
	var b strings.Builder
	fmt.Fprintf(&b, "stopping %s would leave shard %s with %d of its %d replicas running, fewer than the %d it needs to elect a leader and take writes",
		target, shard, running, replicas, need)
	if len(down) > 0 {
		names, fixes := downText(down)
		fmt.Fprintf(&b, "; already down: %s. Bring %s back first (%s), or add -force to stop %s anyway",
			names, itOrThem(len(down)), fixes, target)
	} else {
		fmt.Fprintf(&b, ". Add -force to stop %s anyway", target)
	}
	fmt.Fprintf(&b, "; %s then takes no writes until a majority of its replicas runs again", shard)
	return failed("%s", b.String())
}

// downText lists down for an error: "rg1-rn2 (why), ..." and the distinct
// fixes, "fix; fix".
func downText(down []downReplica) (names, fixes string) {
	var n, f []string
	for _, d := range down {
		n = append(n, d.Name+" ("+d.Reason+")")
		if !slices.Contains(f, d.Fix) {
			f = append(f, d.Fix)
		}
	}
	return strings.Join(n, ", "), strings.Join(f, "; ")
}
