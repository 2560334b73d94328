package node

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// Storage states a node reports (NodeInfo.storage.state): the engine's own
// (storage.Health: ok, low-disk, read-only, corrupt), and rebuilding while
// an incident is open or a replica rebuilds from its peers.
const storageRebuilding = "rebuilding"

// storageInfo is the node's storage state for Describe; shards are the
// replica states describe gathered.
func (n *SN) storageInfo(shards []*controlpb.ShardState) *controlpb.StorageInfo {
	si := &controlpb.StorageInfo{State: "ok", AvailBytes: -1}
	if e := n.engine(); e != nil {
		h := e.Health()
		si.State, si.Detail, si.AvailBytes, si.MinFreeBytes = h.State, h.Detail, h.AvailBytes, h.MinFreeBytes
	}
	if h := n.admin.Load(); h != nil && si.State != "corrupt" {
		if ah := h.engine.Health(); ah.State == "corrupt" {
			si.State, si.Detail = ah.State, "the admin's store: "+ah.Detail
		}
	}
	incidents := n.incidents.snapshot()
	for _, in := range incidents {
		si.Incidents = append(si.Incidents, in.pb())
	}
	si.AsideDirs = asideDirs(n.cfg.FS, n.cfg.dataDir(), n.adminDir())
	if si.State == "corrupt" {
		return si
	}
	if detail, ok := n.rebuildingDetail(incidents, shards); ok {
		si.State, si.Detail = storageRebuilding, detail
	}
	return si
}

// rebuildingDetail says what the node rebuilds, if it does: its newest
// open incident, or replicas that rejoin after their data was lost.
func (n *SN) rebuildingDetail(incidents []incident, shards []*controlpb.ShardState) (string, bool) {
	for _, in := range slices.Backward(incidents) {
		if !in.Resolved {
			return in.Detail, true
		}
	}
	if h := n.admin.Load(); h != nil && rebuilding(h.rep) {
		return "the admin replica waits to be readmitted by the other admins and for their snapshot", true
	}
	var names []string
	for _, st := range shards {
		if st.GetRebuilding() {
			names = append(names, fmt.Sprintf("%s-rn%d", topology.ShardName(topology.ShardID(st.GetShard())), n.id()))
		}
	}
	if len(names) == 0 {
		return "", false
	}
	return fmt.Sprintf("%s %s to be readmitted and for a snapshot from the leader (the data was lost)",
		strings.Join(names, ", "), waitOrWaits(len(names))), true
}

func waitOrWaits(n int) string {
	if n == 1 {
		return "waits"
	}
	return "wait"
}
