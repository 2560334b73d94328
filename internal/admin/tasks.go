package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// do runs one task once. Every task is idempotent: it first checks whether
// its work is already done.
func (s *Service) do(ctx context.Context, p *Plan, t *Task) error {
	switch t.Kind {
	case "add-zone":
		return s.taskAddZone(ctx, t)
	case "register-sn":
		return s.taskRegisterSN(ctx, p, t)
	case "host-admin":
		return s.taskHostAdmin(ctx, t)
	case "add-admin-learner":
		return s.cfg.Replica.AddLearner(ctx, argID(t, "sn"))
	case "add-admin-voter":
		return s.cfg.Replica.AddVoter(ctx, argID(t, "sn"))
	case "await-admin":
		return s.taskAwaitAdmin(ctx, t)
	case "record-admin":
		return s.taskRecordAdmin(ctx, t)
	case "transfer-admin-leader":
		return s.taskTransferAdminLeader(ctx, t)
	case "remove-admin-member":
		return s.taskRemoveAdminMember(ctx, t)
	case "drop-admin":
		return s.taskDropAdmin(ctx, p, t)
	case "record-admin-removal":
		return s.taskRecordAdminRemoval(ctx, p, t)
	case "install-topology":
		return s.taskInstallTopology(ctx, p, t)
	case "await-leaders":
		return s.taskAwaitLeaders(ctx, p)
	case "record-topology":
		return s.taskRecordTopology(ctx, p)
	case "init-tables":
		return s.taskInitTables(ctx, p)
	case "split-partitions":
		return s.taskSplit(ctx, t)
	case "publish-topology":
		return s.taskPublish(ctx, p, t)
	case "move-partitions":
		return s.taskMovePartitions(ctx, p, t)
	case "join-replica":
		return s.taskJoinReplica(ctx, p, t)
	case "leave-replica":
		return s.taskLeaveReplica(ctx, p, t)
	case "retire-sn":
		return s.taskRetireSN(ctx, t)
	case "join-pools":
		return s.taskJoinPools(ctx, t)
	case "set-service":
		return s.taskSetService(ctx, p, t)
	case "leave":
		return s.taskLeave(ctx, t)
	case "remove-sn":
		return s.taskRemoveSN(ctx, t)
	case "verify-blocks":
		return s.taskVerifyBlocks(ctx, p, t)
	case "verify-shard":
		return s.taskVerifyShard(ctx, p, t)
	case "verify-report":
		return s.taskVerifyReport(ctx, p)
	}
	return permanent("unknown task kind %q (written by a newer Cairn?)", t.Kind)
}

func argID(t *Task, name string) uint64 {
	n, _ := strconv.ParseUint(t.Args[name], 10, 64)
	return n
}

func (s *Service) taskAddZone(ctx context.Context, t *Task) error {
	rf, _ := strconv.Atoi(t.Args["rf"])
	_, err := s.store.update(ctx, func(m *Meta) error {
		if z := m.zoneByName(t.Args["name"]); z != nil {
			return nil
		}
		m.NextZone++
		m.Zones = append(m.Zones, Zone{ID: m.NextZone, Name: t.Args["name"], RF: rf, Type: t.Args["type"]})
		m.event("zone %s deployed as %s (rf %d, %s)", t.Args["name"], zoneName(m.NextZone), rf, t.Args["type"])
		return nil
	})
	return err
}

func (s *Service) taskRegisterSN(ctx context.Context, p *Plan, t *Task) error {
	addr := t.Args["host"] + ":" + t.Args["port"]
	info, err := s.control(addr).Describe(ctx, &controlpb.DescribeRequest{})
	if err != nil {
		return err
	}
	var id uint64
	m, err := s.store.update(ctx, func(m *Meta) error {
		if sn := m.snByUID(info.GetUid()); sn != nil {
			id = sn.ID
			return nil
		}
		q := m.plan(p.ID)
		if q.Data == nil {
			q.Data = map[string]string{}
		}
		if v, ok := q.Data["sn"]; ok {
			id, _ = strconv.ParseUint(v, 10, 64)
			return nil
		}
		switch {
		case info.GetUid() == m.BootstrapUID:
			id = 1
		default:
			m.NextSN++
			id = m.NextSN
		}
		q.Data["sn"] = strconv.FormatUint(id, 10)
		return nil
	})
	if err != nil {
		return err
	}
	if info.GetStore() != "" && (info.GetStore() != m.Store || info.GetSnId() != id) {
		return permanent("the node at %s already belongs to store %q as sn%d; give a node that is not in a store (cairn sn init on a fresh root)", addr, info.GetStore(), info.GetSnId())
	}
	peers := m.peers()
	peers[id] = addr
	if _, err := s.control(addr).Join(ctx, &controlpb.JoinRequest{Store: m.Store, SnId: id, Uid: info.GetUid(), Peers: peers}); err != nil {
		return err
	}
	zone, _ := strconv.Atoi(t.Args["zone"])
	port, _ := strconv.Atoi(t.Args["port"])
	_, err = s.store.update(ctx, func(m *Meta) error {
		if m.sn(id) != nil {
			return nil
		}
		m.SNs = append(m.SNs, SN{ID: id, Zone: zone, Host: t.Args["host"], Port: port,
			Capacity: int(info.GetCapacity()), UID: info.GetUid(), StorageDirs: info.GetStorageDirs()})
		m.event("storage node %s deployed at %s in %s (capacity %d)", snName(id), addr, zoneName(zone), info.GetCapacity())
		return nil
	})
	return err
}

func (s *Service) taskHostAdmin(ctx context.Context, t *Task) error {
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	sn := m.sn(argID(t, "sn"))
	if sn == nil {
		return permanent("%s is not deployed", snName(argID(t, "sn")))
	}
	_, err = s.control(sn.Addr()).HostAdmin(ctx, &controlpb.HostAdminRequest{Store: m.Store, SnId: sn.ID, Peers: m.peers()})
	return err
}

// taskAwaitAdmin waits for a new admin replica to catch up with the leader.
func (s *Service) taskAwaitAdmin(ctx context.Context, t *Task) error {
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	sn := m.sn(argID(t, "sn"))
	want := s.cfg.Replica.AppliedIndex()
	for {
		info, err := s.control(sn.Addr()).Describe(ctx, &controlpb.DescribeRequest{})
		if err != nil {
			return err
		}
		if info.GetAdminApplied() >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the admin on %s is at index %d of %d", snName(sn.ID), info.GetAdminApplied(), want)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Service) taskRecordAdmin(ctx context.Context, t *Task) error {
	id := argID(t, "sn")
	_, err := s.store.update(ctx, func(m *Meta) error {
		m.AdminCleanup = slices.DeleteFunc(m.AdminCleanup, func(x uint64) bool { return x == id })
		if !slices.Contains(m.Admins, id) {
			m.Admins = append(m.Admins, id)
			m.event("admin deployed on %s (%d admins)", snName(id), len(m.Admins))
		}
		return nil
	})
	return err
}

// planTopology returns the topology a deploy-topology plan installs.
func planTopology(p *Plan) (*topology.Topology, error) {
	var t topology.Topology
	if err := json.Unmarshal([]byte(p.Data["topology"]), &t); err != nil {
		return nil, permanent("the plan's topology is unreadable: %v", err)
	}
	return &t, nil
}

func (s *Service) taskInstallTopology(ctx context.Context, p *Plan, t *Task) error {
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	sn := m.sn(argID(t, "sn"))
	if sn == nil {
		return permanent("%s is not deployed", snName(argID(t, "sn")))
	}
	_, err = s.control(sn.Addr()).InstallTopology(ctx, &controlpb.InstallTopologyRequest{
		Store: m.Store, Topology: []byte(p.Data["topology"]), Peers: m.peers()})
	return err
}

// taskAwaitLeaders waits until every shard of the plan's topology has a
// leader (awaitLeaders).
func (s *Service) taskAwaitLeaders(ctx context.Context, p *Plan) error {
	topo, err := planTopology(p)
	if err != nil {
		return err
	}
	return s.awaitLeaders(ctx, topo, preferredWait)
}

// preferredWait bounds how long awaitLeaders waits, once every shard has
// a leader, for each to be led by its preferred node.
const preferredWait = 10 * time.Second

// awaitLeaders waits until every shard of topo has a leader, and then, for
// at most settle, until each is led by its preferred node. A leader that
// is not the preferred one hands over within seconds (replica
// preferLeader), and a verify configuration run in that handover finds no
// leader: a plan that ends with leaders in place leaves a store that
// verifies clean at once (the white paper's script verifies right after
// deploy-topology). A preferred node that does not take over within
// settle (down, or far behind) does not fail the plan.
func (s *Service) awaitLeaders(ctx context.Context, topo *topology.Topology, settle time.Duration) error {
	var allLed time.Time
	for {
		missing, elsewhere := s.shardLeaders(ctx, topo)
		if len(missing) == 0 {
			if allLed.IsZero() {
				allLed = time.Now()
			}
			if len(elsewhere) == 0 || time.Since(allLed) >= settle {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if len(missing) > 0 {
				return fmt.Errorf("no leader yet for shards %v", missing)
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// shardLeaders asks topo's nodes which shards they lead: the shards no
// node leads, and those led by a node other than their preferred one.
func (s *Service) shardLeaders(ctx context.Context, topo *topology.Topology) (missing, elsewhere []string) {
	led := make(map[uint64]topology.NodeID)
	for _, n := range topo.Nodes {
		info, err := s.control(n.Addr).Describe(ctx, &controlpb.DescribeRequest{})
		if err != nil {
			continue
		}
		for _, sh := range info.GetShards() {
			if sh.GetIsLeader() {
				led[sh.GetShard()] = n.ID
			}
		}
	}
	for _, sh := range topo.Shards {
		switch lead, ok := led[uint64(sh.ID)]; {
		case !ok:
			missing = append(missing, topology.ShardName(sh.ID))
		case sh.Preferred != 0 && lead != sh.Preferred:
			elsewhere = append(elsewhere, topology.ShardName(sh.ID))
		}
	}
	return missing, elsewhere
}

func (s *Service) taskRecordTopology(ctx context.Context, p *Plan) error {
	topo, err := planTopology(p)
	if err != nil {
		return err
	}
	_, err = s.store.update(ctx, func(m *Meta) error {
		if m.Deployed != nil && m.Deployed.Seq >= topo.Seq {
			return nil
		}
		m.Deployed, m.DeployedName = topo, p.Args["name"]
		m.event("topology %s deployed (sequence %d): %d shards, %d partitions", p.Args["name"], topo.Seq, len(topo.Shards), topo.Partitions)
		return nil
	})
	return err
}

// taskSetService starts or stops a replica. A stop without -force checks
// again, when it runs, that the shard keeps a majority: the plan may have
// waited (PENDING, or queued behind another plan) since it was created.
func (s *Service) taskSetService(ctx context.Context, p *Plan, t *Task) error {
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	shard, id := argID(t, "shard"), argID(t, "sn")
	sn := m.sn(id)
	if sn == nil {
		return permanent("%s is not deployed", snName(id))
	}
	run := t.Args["run"] == "true"
	if !run && t.Args["force"] != "true" {
		if err := s.checkStopKeepsMajority(ctx, m, p, shard, id); err != nil {
			return err
		}
	}
	if _, err := s.control(sn.Addr()).SetService(ctx, &controlpb.SetServiceRequest{Store: m.Store, Shard: shard, Run: run}); err != nil {
		return err
	}
	name := serviceName(shard, id)
	_, err = s.store.update(ctx, func(m *Meta) error {
		i := slices.Index(m.Stopped, name)
		switch {
		case run && i >= 0:
			m.Stopped = slices.Delete(m.Stopped, i, i+1)
			m.event("service %s started", name)
		case !run && i < 0:
			m.Stopped = append(m.Stopped, name)
			m.event("service %s stopped", name)
		}
		return nil
	})
	return err
}

func (s *Service) taskLeave(ctx context.Context, t *Task) error {
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	sn := m.sn(argID(t, "sn"))
	if sn == nil {
		return nil
	}
	if sn.Gone { // its disk is gone: do not wait for it
		gctx, cancel := context.WithTimeout(ctx, goneWait)
		defer cancel()
		ctx = gctx
	}
	_, err = s.control(sn.Addr()).Leave(ctx, &controlpb.LeaveRequest{Store: m.Store, SnId: sn.ID})
	if c := status.Code(err); sn.Gone && (c == codes.Unavailable || c == codes.DeadlineExceeded) {
		return nil
	}
	return err
}

func (s *Service) taskRemoveSN(ctx context.Context, t *Task) error {
	id := argID(t, "sn")
	_, err := s.store.update(ctx, func(m *Meta) error {
		i := slices.IndexFunc(m.SNs, func(sn SN) bool { return sn.ID == id })
		if i < 0 {
			return nil
		}
		m.SNs = slices.Delete(m.SNs, i, i+1)
		if d := m.Deployed; d != nil {
			if _, ok := d.Node(topology.NodeID(id)); ok && len(d.ShardsOn(topology.NodeID(id))) == 0 {
				next := d.Clone()
				next.Nodes = slices.DeleteFunc(next.Nodes, func(n topology.Node) bool { return n.ID == topology.NodeID(id) })
				next.Seq++
				m.Deployed = next
			}
		}
		for pi := range m.Pools {
			m.Pools[pi].SNs = slices.DeleteFunc(m.Pools[pi].SNs, func(x uint64) bool { return x == id })
		}
		m.event("storage node %s removed", snName(id))
		return nil
	})
	return err
}

// checkStopKeepsMajority fails plan p for good if stopping replica (shard,
// sn) would leave the shard without a majority of running replicas.
func (s *Service) checkStopKeepsMajority(ctx context.Context, m *Meta, p *Plan, shard, sn uint64) error {
	if m.Deployed == nil {
		return nil
	}
	sh, ok := m.Deployed.Shard(topology.ShardID(shard))
	if !ok {
		return permanent("shard %s is not in the deployed topology", topology.ShardName(topology.ShardID(shard)))
	}
	if err := checkMajority(m, sh, sn, s.describeAll(ctx, m), p.ID); err != nil {
		return permanent("%s", status.Convert(err).Message())
	}
	return nil
}
