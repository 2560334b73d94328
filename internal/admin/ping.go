package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/latency"
	"github.com/cairndb/cairn/internal/topology"
)

// A shard's health, as ping reports it (Oracle NoSQL's shard status). A
// replica is up when its node answers and it runs (not stopped). A leader
// counts only with a majority of replicas up: one left alone may still
// call itself leader, but it cannot commit a write.
const (
	healthy          = "healthy"           // a leader, and every replica up
	writableDegraded = "writable-degraded" // a leader and a majority up, some replica down
	readOnly         = "read-only"         // no leader or no majority, some replica up
	offline          = "offline"           // no replica up
)

// shardStatus counts shards by health. It is ping's "shard_status" JSON.
type shardStatus struct {
	Healthy          int `json:"healthy"`
	WritableDegraded int `json:"writable_degraded"`
	ReadOnly         int `json:"read_only"`
	Offline          int `json:"offline"`
	Total            int `json:"total"`
}

func (c *shardStatus) add(health string) {
	c.Total++
	switch health {
	case healthy:
		c.Healthy++
	case writableDegraded:
		c.WritableDegraded++
	case readOnly:
		c.ReadOnly++
	default:
		c.Offline++
	}
}

// String is the Oracle-style summary line's value.
func (c shardStatus) String() string {
	return fmt.Sprintf("healthy: %d writable-degraded: %d read-only: %d offline: %d total: %d",
		c.Healthy, c.WritableDegraded, c.ReadOnly, c.Offline, c.Total)
}

// pingShard is one shard in ping's JSON.
type pingShard struct {
	Shard  string `json:"shard"`  // rg1
	Status string `json:"status"` // healthy, writable-degraded, read-only or offline
	Up     int    `json:"up"`     // replicas up
	Total  int    `json:"total"`  // replicas
	// Stuck names the replicas that answer but cannot follow the leader
	// (not counted up).
	Stuck []string `json:"stuck,omitempty"`
}

// pingReplica is one replica (or admin) a node reports, in ping's JSON.
type pingReplica struct {
	Service string `json:"service"` // rg1-rn2, or "admin on sn2"
	Status  string `json:"status"`  // RUNNING,MASTER, RUNNING,REPLICA, STOPPED, ...
	Applied uint64 `json:"applied"`
}

// pingNode is one storage node in ping's JSON.
type pingNode struct {
	SN       uint64        `json:"sn"`
	Addr     string        `json:"addr"`
	Zone     string        `json:"zone"`
	Status   string        `json:"status"` // RUNNING or UNREACHABLE
	Version  string        `json:"version"`
	Admin    *pingReplica  `json:"admin"` // null: no admin here
	Replicas []pingReplica `json:"replicas"`
	Storage  *pingStorage  `json:"storage"` // null: the node does not answer
	// Requests and RequestErrors count the KV calls the node served since
	// its KV service started (0 for a node that does not answer).
	Requests      uint64 `json:"requests"`
	RequestErrors uint64 `json:"request_errors"`
	// ReadLatency and WriteLatency are how long those calls took the node,
	// reads and writes apart (null for a node that does not answer).
	ReadLatency  *pingLatency `json:"read_latency"`
	WriteLatency *pingLatency `json:"write_latency"`
}

// pingLatency is a histogram of a node's call durations, in ping's JSON:
// Counts[i] calls took at most BoundsMicros[i] (and more than the bound
// before it); the last count is of calls above the last bound.
type pingLatency struct {
	BoundsMicros []int64  `json:"bounds_us"`
	Counts       []uint64 `json:"counts"`
	SumMicros    uint64   `json:"sum_us"`
}

// latencyBounds is internal/latency's Bounds in microseconds.
var latencyBounds = func() []int64 {
	out := make([]int64, len(latency.Bounds))
	for i, b := range latency.Bounds {
		out[i] = b.Microseconds()
	}
	return out
}()

// pingLatencyOf is l for ping's JSON (nil from a node too old to send it).
func pingLatencyOf(l *controlpb.Latency) *pingLatency {
	if l == nil {
		return nil
	}
	return &pingLatency{BoundsMicros: latencyBounds, Counts: l.GetCounts(), SumMicros: l.GetSumMicros()}
}

// pingStorage is a node's storage in ping's JSON.
type pingStorage struct {
	State string `json:"state"` // ok, low-disk, read-only, corrupt or rebuilding
	// Text is what ping prints after "storage: " ("" when ok).
	Text      string   `json:"text"`
	AsideDirs []string `json:"aside_dirs"` // directories of corrupt stores set aside
	// AvailBytes is the data directory's free space at the node's last
	// check (-1: unknown), MinFreeBytes the margin under which puts are
	// refused (low-disk).
	AvailBytes   int64 `json:"avail_bytes"`
	MinFreeBytes int64 `json:"min_free_bytes"`
}

func pingStorageOf(info *controlpb.NodeInfo) *pingStorage {
	st := info.GetStorage()
	p := &pingStorage{State: storageState(info), Text: storageText(st), AsideDirs: []string{},
		AvailBytes: -1, MinFreeBytes: st.GetMinFreeBytes()}
	if st != nil {
		p.AvailBytes = st.GetAvailBytes()
	}
	for _, d := range st.GetAsideDirs() {
		p.AsideDirs = append(p.AsideDirs, d.GetPath())
	}
	return p
}

// pingReport is ping's JSON document.
type pingReport struct {
	Store        string      `json:"store"`
	TopologySeq  uint64      `json:"topology_seq"`
	ShardStatus  shardStatus `json:"shard_status"`
	AdminStatus  string      `json:"admin_status"`
	Shards       []pingShard `json:"shards"`
	StorageNodes []pingNode  `json:"storage_nodes"`
	// Problems is true when ping exits 1: a node does not answer or its
	// storage is not ok, a shard has no leader (read-only or offline), or
	// the admin has none.
	Problems bool `json:"problems"`
}

// shardHealth judges shard sh from what its replicas' nodes answered.
func shardHealth(m *Meta, sh topology.Shard, infos map[uint64]*controlpb.NodeInfo) pingShard {
	up, led := 0, false
	stuck := stuckFollowers(sh, infos)
	for _, r := range sh.Replicas {
		st := shardState(infos[uint64(r)], uint64(sh.ID))
		if st == nil || !st.GetRunning() || st.GetRebuilding() || stuck[uint64(r)] != "" || slices.Contains(m.Stopped, serviceName(uint64(sh.ID), uint64(r))) {
			continue
		}
		up++
		led = led || st.GetIsLeader()
	}
	p := pingShard{Shard: topology.ShardName(sh.ID), Up: up, Total: len(sh.Replicas)}
	for _, r := range sh.Replicas {
		if stuck[uint64(r)] != "" {
			p.Stuck = append(p.Stuck, serviceName(uint64(sh.ID), uint64(r)))
		}
	}
	switch {
	case led && up == len(sh.Replicas):
		p.Status = healthy
	case led && up > len(sh.Replicas)/2:
		p.Status = writableDegraded
	case up > 0:
		p.Status = readOnly
	default:
		p.Status = offline
	}
	return p
}

// shardState is what info (nil: the node did not answer) says about its
// replica of shard, or nil.
func shardState(info *controlpb.NodeInfo, shard uint64) *controlpb.ShardState {
	for _, st := range info.GetShards() {
		if st.GetShard() == shard {
			return st
		}
	}
	return nil
}

// adminStatus is the admin group's health: healthy when every admin
// answers, writable-degraded when some does not but the group has a
// leader, read-only when it has none this admin can reach (it answers
// from its own copy: noleader.go), offline when no admin but this one's
// stale copy is left.
func (s *Service) adminStatus(infos map[uint64]*controlpb.NodeInfo) string {
	lead, _ := s.cfg.Replica.Leader()
	voters := s.cfg.Replica.Voters()
	return adminHealth(lead, s.cfg.Node, runningAdmins(voters, s.cfg.Node, infos), len(voters), infos)
}

// adminHealth judges an admin group of n voters with up answering, led by
// lead (0: none) as seen from the admin on self.
func adminHealth(lead, self uint64, up, n int, infos map[uint64]*controlpb.NodeInfo) string {
	leaderUp := lead != 0 && (lead == self || infos[lead].GetAdmin())
	switch {
	case !leaderUp && up > 0:
		return readOnly
	case !leaderUp:
		return offline
	case up < n:
		return writableDegraded
	}
	return healthy
}

// adminState is the state of the admin on storage node id: RUNNING,MASTER
// (it leads), RUNNING,REPLICA, NOT RUNNING (the node answers but hosts no
// admin replica) or UNREACHABLE. self is the node asking, which is running.
func adminState(id, leader, self uint64, infos map[uint64]*controlpb.NodeInfo) string {
	info := infos[id]
	switch {
	case id != self && info == nil:
		return "UNREACHABLE"
	case id != self && !info.GetAdmin():
		return "NOT RUNNING"
	case id == leader:
		return "RUNNING,MASTER"
	}
	return "RUNNING,REPLICA"
}

// pingNodes describes every deployed storage node for ping.
func (s *Service) pingNodes(m *Meta, infos map[uint64]*controlpb.NodeInfo) []pingNode {
	lead, _ := s.cfg.Replica.Leader()
	return pingNodesFor(m, infos, lead, s.cfg.Node)
}

// pingNodesFor describes the nodes as seen by the admin on self, with the
// admin group led by lead.
func pingNodesFor(m *Meta, infos map[uint64]*controlpb.NodeInfo, lead, self uint64) []pingNode {
	nodes := []pingNode{}
	for _, sn := range m.SNs {
		n := pingNode{SN: sn.ID, Addr: sn.Addr(), Status: "UNREACHABLE", Replicas: []pingReplica{}}
		if z := m.zoneByID(sn.Zone); z != nil {
			n.Zone = z.Name
		}
		if info := infos[sn.ID]; info != nil {
			n.Status, n.Version, n.Storage = "RUNNING", info.GetVersion(), pingStorageOf(info)
			n.Requests, n.RequestErrors = info.GetRequests(), info.GetRequestErrors()
			n.ReadLatency, n.WriteLatency = pingLatencyOf(info.GetReadLatency()), pingLatencyOf(info.GetWriteLatency())
			if info.GetAdmin() {
				n.Admin = &pingReplica{Service: "admin on " + snName(sn.ID), Status: adminState(sn.ID, lead, self, infos), Applied: info.GetAdminApplied()}
			}
			for _, st := range info.GetShards() {
				n.Replicas = append(n.Replicas, pingReplica{Service: serviceName(st.GetShard(), sn.ID),
					Status: replicaRole(m, info, st.GetShard()), Applied: st.GetApplied()})
			}
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// pingReportOf gathers ping's report.
func (s *Service) pingReportOf(m *Meta, infos map[uint64]*controlpb.NodeInfo) pingReport {
	r := pingReport{Store: m.Store, Shards: []pingShard{}, AdminStatus: s.adminStatus(infos), StorageNodes: s.pingNodes(m, infos)}
	if m.Deployed != nil {
		r.TopologySeq = m.Deployed.Seq
		for _, sh := range m.Deployed.Shards {
			p := shardHealth(m, sh, infos)
			r.ShardStatus.add(p.Status)
			r.Shards = append(r.Shards, p)
		}
	}
	r.Problems = r.ShardStatus.ReadOnly > 0 || r.ShardStatus.Offline > 0 || len(infos) < len(m.SNs) ||
		r.AdminStatus == readOnly || r.AdminStatus == offline || storageProblem(infos)
	return r
}

// pingText renders the report the way Oracle NoSQL's ping prints it: the
// summary first, then every node and its services, then the shards that
// are not healthy.
func pingText(m *Meta, r pingReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Pinging components of store %s based upon topology sequence #%d\n", r.Store, r.TopologySeq)
	if m.Deployed != nil {
		fmt.Fprintf(&b, "%d %s and %d storage %s\n", m.Deployed.Partitions, plural(int(m.Deployed.Partitions), "partition", "partitions"),
			len(m.SNs), plural(len(m.SNs), "node", "nodes"))
	}
	fmt.Fprintf(&b, "Shard Status: %s\n", r.ShardStatus)
	fmt.Fprintf(&b, "Admin Status: %s\n", r.AdminStatus)
	for _, n := range r.StorageNodes {
		zn := ""
		if z := m.zoneByID(m.sn(n.SN).Zone); z != nil {
			zn = fmt.Sprintf("[name=%s id=%s type=%s]", z.Name, zoneName(z.ID), strings.ToUpper(z.Type))
		}
		if n.Status != "RUNNING" {
			fmt.Fprintf(&b, "Storage Node [%s] on %s  Zone: %s  Status: %s\n", snName(n.SN), n.Addr, zn, n.Status)
			continue
		}
		storage := ""
		if n.Storage != nil && n.Storage.Text != "" {
			storage = "  storage: " + n.Storage.Text
		}
		fmt.Fprintf(&b, "Storage Node [%s] on %s  Zone: %s  Status: RUNNING  Ver: %s%s\n", snName(n.SN), n.Addr, zn, n.Version, storage)
		if a := n.Admin; a != nil {
			fmt.Fprintf(&b, "\tAdmin [%s]\tStatus: %s applied=%d\n", a.Service, a.Status, a.Applied)
		}
		for _, rn := range n.Replicas {
			fmt.Fprintf(&b, "\tRep Node [%s]\tStatus: %s\n", rn.Service, strings.TrimSpace(rn.Status+" "+appliedNote(rn)))
		}
	}
	for _, sh := range r.Shards {
		if sh.Status != healthy {
			fmt.Fprintf(&b, "Shard [%s]\tStatus: %s (%d of %d replicas up%s)\n", sh.Shard, sh.Status, sh.Up, sh.Total, leaderNote(sh))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func appliedNote(r pingReplica) string {
	if !strings.HasPrefix(r.Status, "RUNNING") {
		return ""
	}
	return fmt.Sprintf("applied=%d", r.Applied)
}

// leaderNote says why a shard that is not healthy cannot take writes.
func leaderNote(sh pingShard) string {
	if len(sh.Stuck) > 0 {
		return fmt.Sprintf(", %s cannot follow the leader: see verify configuration", strings.Join(sh.Stuck, ", "))
	}
	switch {
	case sh.Status != readOnly && sh.Status != offline:
		return ""
	case sh.Up > sh.Total/2:
		return ", no leader yet: an election is in progress; writes wait for it"
	}
	return ", fewer than a majority up: no leader can take writes; see verify configuration"
}

// ping contacts every storage node and reports each one's services and
// every shard's health. It reports problems (exit 1) when a node does not
// answer or its storage is not ok, or a shard has no leader.
func (s *Service) ping(ctx context.Context, _ map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	rep := s.pingReportOf(m, s.describeAll(ctx, m))
	r, err := reply(pingText(m, rep), rep)
	if err == nil {
		r.Problems = rep.Problems
	}
	return r, err
}
