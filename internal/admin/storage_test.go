package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
)

// began is when the incidents of these tests began: 14:02:11 UTC.
var began = time.Date(2026, 11, 25, 14, 2, 11, 0, time.UTC)

// rebuildingInfo makes sn2 of threeNodeMeta report a corrupt store set
// aside at began, rebuilding rg1 and rg2 (resolved: rebuilt 8 s later).
func rebuildingInfo(infos map[uint64]*controlpb.NodeInfo, resolved bool) {
	in := &controlpb.Incident{Seq: 1, TimeUnixMs: began.UnixMilli(), Kind: "corrupt",
		Detail:   "storage: corrupt data: /r/sn2/data: MANIFEST-000001 is corrupt at offset 39: checksum mismatch",
		AsideDir: "/r/sn2/data.corrupt-20261125T140211Z", Shards: []uint64{1, 2}}
	si := &controlpb.StorageInfo{State: storageRebuilding, Detail: in.Detail, AvailBytes: 5e9, MinFreeBytes: 64 << 20,
		AsideDirs: []*controlpb.AsideDir{{Path: in.AsideDir, Bytes: 12_345_678}}, Incidents: []*controlpb.Incident{in}}
	if resolved {
		in.Resolved, in.ResolvedUnixMs, si.State, si.Detail = true, began.Add(8*time.Second).UnixMilli(), storageOK, ""
	}
	for _, st := range infos[2].Shards {
		st.Rebuilding = !resolved
	}
	infos[2].Storage = si
}

// TestPingStorage: a rebuilding node's line says so, with when, why and
// where the old files are; its replicas are REBUILDING, do not count as
// up, and ping reports a problem.
func TestPingStorage(t *testing.T) {
	all := nodeReport{1: "follower", 2: "follower"}
	m, infos := threeNodeMeta(map[uint64]nodeReport{1: {1: "leader", 2: "leader"}, 2: all, 3: all})
	rebuildingInfo(infos, false)
	var r pingReport
	r.Store, r.TopologySeq, r.AdminStatus = m.Store, 1, healthy
	for _, sh := range m.Deployed.Shards {
		p := shardHealth(m, sh, infos)
		r.ShardStatus.add(p.Status)
		r.Shards = append(r.Shards, p)
	}
	r.StorageNodes = pingNodesFor(m, infos, 0, 1)
	text := pingText(m, r)
	for _, want := range []string{
		"Storage Node [sn2] on 127.0.0.1:5002  Zone:   Status: RUNNING  Ver:   storage: rebuilding from peers since 14:02:11 (storage: corrupt data: /r/sn2/data: MANIFEST-000001 is corrupt at offset 39: checksum mismatch); old files in /r/sn2/data.corrupt-20261125T140211Z\n",
		"\tRep Node [rg1-rn2]\tStatus: REBUILDING\n",
		"Shard [rg1]\tStatus: writable-degraded (2 of 3 replicas up)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("ping lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "[sn1] on 127.0.0.1:5001  Zone:   Status: RUNNING  Ver:   storage") {
		t.Errorf("ping shows the storage of a node whose storage is ok:\n%s", text)
	}
	if !storageProblem(infos) {
		t.Errorf("a rebuilding node is not a problem for ping")
	}
	rebuildingInfo(infos, true)
	if storageProblem(infos) {
		t.Errorf("a rebuilt node is still a problem for ping")
	}
}

// TestVerifyStorage: a rebuilding node is a violation naming its
// replicas, low disk a warning, and each aside directory a warning.
func TestVerifyStorage(t *testing.T) {
	all := nodeReport{1: "follower", 2: "follower"}
	m, infos := threeNodeMeta(map[uint64]nodeReport{1: {1: "leader", 2: "leader"}, 2: all, 3: all})
	rebuildingInfo(infos, false)
	infos[3].Storage = &controlpb.StorageInfo{State: storageLowDisk, Detail: "free space is at the margin", AvailBytes: 60e6, MinFreeBytes: 64e6}
	var v verification
	(&Service{}).verifyShards(m, infos, &v)
	(&Service{}).verifyStorage(m, infos, &v)
	text := verifyText(m, 1, 3, 1, &v)
	for _, want := range []string{
		"Verify: violation sn2: storage is rebuilding from peers since 14:02:11 (storage: corrupt data: /r/sn2/data: MANIFEST-000001 is corrupt at offset 39: checksum mismatch); old files in /r/sn2/data.corrupt-20261125T140211Z; rg1-rn2, rg2-rn2 serve nothing until each has been readmitted and installed a snapshot from its leader",
		"Verify: warning   sn3: storage is low-disk: free space is at the margin (60.0 MB free, margin 64.0 MB)",
		"Verify: warning   sn2: keeps the files of a corrupt store in /r/sn2/data.corrupt-20261125T140211Z (12.3 MB); remove them once inspected",
		"Verification complete: 1 violation, 2 warnings.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("verify lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "lagging") {
		t.Errorf("a rebuilding replica is also reported lagging:\n%s", text)
	}

	rebuildingInfo(infos, true)
	infos[3].Storage = nil
	v = verification{}
	(&Service{}).verifyStorage(m, infos, &v)
	if len(v.Violations) != 0 || len(v.Warnings) != 1 || v.Warnings[0].Rule != "storage-aside" {
		t.Errorf("after the rebuild: %v %v, want only the aside warning", v.Violations, v.Warnings)
	}
}

// TestRecordIncidents: each incident becomes one event when new and one
// when resolved, whatever the number of polls, and the marks in the
// metadata keep a new leader from recording them again.
func TestRecordIncidents(t *testing.T) {
	m, infos := threeNodeMeta(map[uint64]nodeReport{1: {}, 2: {1: "follower", 2: "follower"}, 3: {}})
	rebuildingInfo(infos, false)
	if !recordIncidents(m, infos) || recordIncidents(m, infos) {
		t.Fatalf("two polls of a new incident: want one change, then none")
	}
	rebuildingInfo(infos, true)
	if !recordIncidents(m, infos) || recordIncidents(m, infos) {
		t.Fatalf("two polls of a resolved incident: want one change, then none")
	}
	want := []string{
		"sn2: storage corrupt: storage: corrupt data: /r/sn2/data: MANIFEST-000001 is corrupt at offset 39: checksum mismatch; old files kept in /r/sn2/data.corrupt-20261125T140211Z; rebuilding shards rg1, rg2 from their peers",
		"sn2: storage rebuilt from peers in 8.0s",
	}
	if len(m.Events) != 2 || m.Events[0].Text != want[0] || m.Events[1].Text != want[1] {
		t.Fatalf("events %+v, want %q", m.Events, want)
	}
	if got := m.StorageIncidents[2]; got != (IncidentMark{Reported: 1, Resolved: 1}) {
		t.Errorf("mark for sn2: %+v", got)
	}

	// A node that was down while its incident began and ended: both events
	// in one poll.
	m2, _ := threeNodeMeta(nil)
	if !recordIncidents(m2, infos) || len(m2.Events) != 2 {
		t.Errorf("an incident new and resolved in one poll: %+v", m2.Events)
	}
}
