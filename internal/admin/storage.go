package admin

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
)

// What the admin says about a storage node's storage (NodeInfo.storage):
// ping prints the state on the node's line and marks rebuilding replicas
// REBUILDING; verify configuration makes a violation of a node whose
// storage is corrupt, read-only or rebuilding and a warning of low disk
// space and of each aside directory; show events records each incident
// (incidents.go).
const (
	storageOK         = "ok"
	storageLowDisk    = "low-disk"
	storageReadOnly   = "read-only"
	storageCorrupt    = "corrupt"
	storageRebuilding = "rebuilding"
)

// sinceTime is how ping prints when an incident began: UTC, "14:02:11".
const sinceTime = "15:04:05"

// storageState is the node's storage state; "ok" for a node that does not
// report one (an older version).
func storageState(info *controlpb.NodeInfo) string {
	if s := info.GetStorage().GetState(); s != "" {
		return s
	}
	return storageOK
}

// openIncident is the newest incident the node has not resolved, or nil.
func openIncident(si *controlpb.StorageInfo) *controlpb.Incident {
	in := si.GetIncidents()
	for i := len(in) - 1; i >= 0; i-- {
		if !in[i].GetResolved() {
			return in[i]
		}
	}
	return nil
}

// storageText is the node's storage state as ping prints it after
// "storage: ", or "" when it is ok.
func storageText(si *controlpb.StorageInfo) string {
	switch state := si.GetState(); state {
	case "", storageOK:
		return ""
	case storageRebuilding:
		if in := openIncident(si); in != nil {
			return fmt.Sprintf("rebuilding from peers since %s (%s); old files in %s",
				time.UnixMilli(in.GetTimeUnixMs()).UTC().Format(sinceTime), in.GetDetail(), in.GetAsideDir())
		}
		return fmt.Sprintf("rebuilding from peers (%s)", si.GetDetail())
	case storageLowDisk, storageReadOnly:
		return fmt.Sprintf("%s: %s (%s free, margin %s)", state, si.GetDetail(), bytesText(si.GetAvailBytes()), bytesText(si.GetMinFreeBytes()))
	default:
		return fmt.Sprintf("%s: %s", state, si.GetDetail())
	}
}

// bytesText is a size: "12.3 MB", "41 KB" under a megabyte (rounded up),
// "unknown" below zero.
func bytesText(n int64) string {
	switch {
	case n < 0:
		return "unknown"
	case n < 1e6:
		return fmt.Sprintf("%d KB", (n+999)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// rebuildingServices names the node's replicas that rebuild (ShardState
// rebuilding), or, when none reports it, those of its open incident.
func rebuildingServices(info *controlpb.NodeInfo) []string {
	var out []string
	for _, st := range byShard(info) {
		if st.GetRebuilding() {
			out = append(out, serviceName(st.GetShard(), info.GetSnId()))
		}
	}
	if in := openIncident(info.GetStorage()); len(out) == 0 && in != nil {
		for _, s := range in.GetShards() {
			out = append(out, serviceName(s, info.GetSnId()))
		}
		if in.GetAdmin() {
			out = append(out, "admin on "+snName(info.GetSnId()))
		}
	}
	return out
}

// servicesOf lists the node's replicas: "rg1-rn2, rg2-rn2".
func servicesOf(info *controlpb.NodeInfo) string {
	var out []string
	for _, st := range byShard(info) {
		out = append(out, serviceName(st.GetShard(), info.GetSnId()))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// byShard is the node's replica states in shard order.
func byShard(info *controlpb.NodeInfo) []*controlpb.ShardState {
	out := slices.Clone(info.GetShards())
	slices.SortFunc(out, func(a, b *controlpb.ShardState) int { return cmp.Compare(a.GetShard(), b.GetShard()) })
	return out
}

// verifyStorage adds verify configuration's findings about each node's
// storage.
func (s *Service) verifyStorage(m *Meta, infos map[uint64]*controlpb.NodeInfo, v *verification) {
	for _, sn := range m.SNs {
		info := infos[sn.ID]
		if info == nil {
			continue
		}
		si, name := info.GetStorage(), snName(sn.ID)
		switch storageState(info) {
		case storageRebuilding:
			what := "its replicas"
			if svcs := rebuildingServices(info); len(svcs) > 0 {
				what = strings.Join(svcs, ", ")
			}
			v.violate("storage-rebuilding", name, "storage is %s; %s serve nothing until each has been readmitted and installed a snapshot from its leader (ping shows REBUILDING)",
				storageText(si), what)
		case storageCorrupt:
			v.violate("storage-corrupt", name, "storage is corrupt (%s): its replicas %s refuse writes until the node has set the files aside and rebuilt them from their peers; a shard with no other replica must be restored from a snapshot",
				si.GetDetail(), servicesOf(info))
		case storageReadOnly:
			v.violate("storage-read-only", name, "storage is %s: its replicas %s take no writes; free space on its disk", storageText(si), servicesOf(info))
		case storageLowDisk:
			v.warn("storage-low-disk", name, "storage is %s: puts are refused on this node; free space on its disk", storageText(si))
		}
		for _, d := range si.GetAsideDirs() {
			v.warn("storage-aside", name, "keeps the files of a corrupt store in %s (%s); remove them once inspected", d.GetPath(), bytesText(d.GetBytes()))
		}
	}
}

// storageProblem reports whether a node's storage is not ok (ping then
// exits 1).
func storageProblem(infos map[uint64]*controlpb.NodeInfo) bool {
	for _, info := range infos {
		if storageState(info) != storageOK {
			return true
		}
	}
	return false
}
