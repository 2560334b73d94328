package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cairndb/cairn/internal/topology"
)

// The states of a node in a Status.
const (
	StateUp           = "up"           // it answers StoreInfo
	StateDown         = "down"         // no process
	StateStopped      = "stopped"      // its process is paused (SIGSTOP)
	StateUnresponsive = "unresponsive" // its process runs but does not answer
	StateForeign      = "foreign"      // something else answers at its address
)

// Status is a cluster's state as its processes and live nodes report it.
type Status struct {
	Root       string        `json:"root"`
	Store      string        `json:"store"`
	Partitions uint32        `json:"partitions"`
	RF         int           `json:"rf"`
	Nodes      []NodeStatus  `json:"nodes"`
	Shards     []ShardStatus `json:"shards"`
	// Healthy: every node is up and every shard is led. Problems says why
	// not, one sentence each.
	Healthy  bool     `json:"healthy"`
	Problems []string `json:"problems,omitempty"`
}

// NodeStatus is one node.
type NodeStatus struct {
	ID      topology.NodeID    `json:"id"`
	Addr    string             `json:"addr"`
	PID     int                `json:"pid"`     // 0 unless the process is the node's
	Process string             `json:"process"` // ProcState: running, stopped, gone, pid reused
	State   string             `json:"state"`   // StateUp, ...
	Leads   []topology.ShardID `json:"leads"`   // shards it leads (per ShardStatus.Leader)
	Error   string             `json:"error,omitempty"`
}

// ShardStatus is one shard.
type ShardStatus struct {
	ID topology.ShardID `json:"id"`
	// Leader is the leader named at the highest term by a live replica (0:
	// none known); Term is that term. Led: that leader answers and says it
	// leads at Term.
	Leader   topology.NodeID `json:"leader"`
	Term     uint64          `json:"term"`
	Led      bool            `json:"led"`
	Replicas []ReplicaStatus `json:"replicas"`
}

// ReplicaStatus is one replica as its node reports it. Only Node and Up
// are set for a node that does not answer.
type ReplicaStatus struct {
	Node     topology.NodeID `json:"node"`
	Up       bool            `json:"up"`
	Leader   topology.NodeID `json:"leader"` // the leader this replica knows (0: none)
	Term     uint64          `json:"term"`
	Applied  uint64          `json:"applied"`
	IsLeader bool            `json:"is_leader"`
}

// Shard returns the shard with id.
func (s *Status) Shard(id topology.ShardID) (ShardStatus, bool) {
	i := slices.IndexFunc(s.Shards, func(x ShardStatus) bool { return x.ID == id })
	if i < 0 {
		return ShardStatus{}, false
	}
	return s.Shards[i], true
}

// Node returns the node with id.
func (s *Status) Node(id topology.NodeID) (NodeStatus, bool) {
	i := slices.IndexFunc(s.Nodes, func(x NodeStatus) bool { return x.ID == id })
	if i < 0 {
		return NodeStatus{}, false
	}
	return s.Nodes[i], true
}

// AllLed reports whether every shard is led.
func (s *Status) AllLed() bool {
	for _, sh := range s.Shards {
		if !sh.Led {
			return false
		}
	}
	return true
}

// GetStatus inspects the cluster in dir: its processes, and StoreInfo from
// every node (at once, each bounded by a short timeout).
func GetStatus(ctx context.Context, dir string) (_ *Status, err error) {
	defer func() { err = prefixed(err) }()
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	f, err := Load(dir)
	if err != nil {
		return nil, err
	}
	topo, err := loadTopology(f)
	if err != nil {
		return nil, err
	}
	p, err := newProber(dir, f.Nodes)
	if err != nil {
		return nil, err
	}
	defer p.close()
	procs := inspectAll(f)
	return assess(dir, f, topo, procs, p.poll(ctx, procs)), nil
}

func inspectAll(f *File) map[topology.NodeID]ProcState {
	out := make(map[topology.NodeID]ProcState, len(f.Nodes))
	for _, n := range f.Nodes {
		out[n.ID] = Inspect(n.PID, n.Root)
	}
	return out
}

// assess turns process states and StoreInfo replies into a Status. It is
// pure, so the leader rules are tested without processes.
func assess(dir string, f *File, topo *topology.Topology, procs map[topology.NodeID]ProcState, replies map[topology.NodeID]reply) *Status {
	st := &Status{Root: dir, Store: f.Store, Partitions: f.Partitions, RF: f.RF}
	up := map[topology.NodeID]bool{}
	for _, n := range f.Nodes {
		ns := NodeStatus{ID: n.ID, Addr: n.Addr, Process: procs[n.ID].String(), Leads: []topology.ShardID{}}
		if procs[n.ID].Ours() {
			ns.PID = n.PID
		}
		r := replies[n.ID]
		switch {
		case r.err == nil && r.info != nil && (r.info.GetStore() != f.Store || topology.NodeID(r.info.GetNode()) != n.ID):
			ns.State = StateForeign
			ns.Error = fmt.Sprintf("%s answers as node %d of store %q", n.Addr, r.info.GetNode(), r.info.GetStore())
			st.Problems = append(st.Problems, fmt.Sprintf("node %d: %s; another process took its address", n.ID, ns.Error))
		case r.err == nil && r.info != nil:
			ns.State = StateUp
			up[n.ID] = true
		case procs[n.ID] == ProcStopped:
			ns.State = StateStopped
			st.Problems = append(st.Problems, fmt.Sprintf("node %d is paused (SIGSTOP, pid %d); resume it with 'cairn cluster kill --root %s --node %d --signal CONT'", n.ID, n.PID, dir, n.ID))
		case procs[n.ID] == ProcRunning:
			ns.State = StateUnresponsive
			st.Problems = append(st.Problems, fmt.Sprintf("node %d (pid %d) runs but does not answer at %s; see %s", n.ID, n.PID, n.Addr, filepath.Join(n.Root, LogName)))
		default:
			ns.State = StateDown
			st.Problems = append(st.Problems, fmt.Sprintf("node %d is down; start it with 'cairn cluster start --root %s --node %d'", n.ID, dir, n.ID))
		}
		if ns.State != StateUp && r.err != nil && ns.Error == "" {
			ns.Error = rpcError(r.err)
		}
		st.Nodes = append(st.Nodes, ns)
	}
	for _, sh := range topo.Shards {
		ss := ShardStatus{ID: sh.ID}
		live := 0
		var best *ReplicaStatus
		for _, id := range sh.Replicas {
			rs := ReplicaStatus{Node: id}
			if up[id] {
				for _, l := range replies[id].info.GetLocalShards() {
					if topology.ShardID(l.GetShard()) == sh.ID {
						rs.Up, rs.Leader, rs.Term, rs.Applied, rs.IsLeader = true, topology.NodeID(l.GetLeader()), l.GetTerm(), l.GetApplied(), l.GetIsLeader()
					}
				}
			}
			if rs.Up {
				live++
			}
			ss.Replicas = append(ss.Replicas, rs)
		}
		for i := range ss.Replicas {
			rs := &ss.Replicas[i]
			if rs.Up && rs.Leader != 0 && (best == nil || rs.Term > best.Term || (rs.Term == best.Term && rs.IsLeader)) {
				best = rs
			}
		}
		if best != nil {
			ss.Leader, ss.Term = best.Leader, best.Term
			for _, rs := range ss.Replicas {
				if rs.Node == ss.Leader && rs.Up && rs.IsLeader && rs.Term == ss.Term {
					ss.Led = true
				}
			}
		}
		switch {
		case ss.Led:
			for i := range st.Nodes {
				if st.Nodes[i].ID == ss.Leader {
					st.Nodes[i].Leads = append(st.Nodes[i].Leads, ss.ID)
				}
			}
		case best == nil:
			st.Problems = append(st.Problems, fmt.Sprintf("shard %d has no leader: no live replica knows one (%d of %d replicas answer; a leader needs %d)",
				ss.ID, live, len(sh.Replicas), len(sh.Replicas)/2+1))
		default:
			st.Problems = append(st.Problems, fmt.Sprintf("shard %d has no leader: node %d, named leader at term %d, does not answer as the leader (%d of %d replicas answer; a leader needs %d)",
				ss.ID, ss.Leader, ss.Term, live, len(sh.Replicas), len(sh.Replicas)/2+1))
		}
		st.Shards = append(st.Shards, ss)
	}
	st.Healthy = len(st.Problems) == 0
	return st
}

// Text renders s for a terminal.
func (s *Status) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "store %q in %s: %d nodes, %d shards, rf %d, %d partitions\n\n", s.Store, s.Root, len(s.Nodes), len(s.Shards), s.RF, s.Partitions)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tADDRESS\tPID\tSTATE\tLEADS")
	for _, n := range s.Nodes {
		pid := "-"
		if n.PID != 0 {
			pid = fmt.Sprint(n.PID)
		}
		leads := "-"
		if len(n.Leads) > 0 {
			leads = "shard " + joinIDs(n.Leads)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", n.ID, n.Addr, pid, n.State, leads)
	}
	tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SHARD\tLEADER\tTERM\tREPLICAS (node: term/applied, * leads)")
	for _, sh := range s.Shards {
		leader := "none"
		if sh.Led {
			leader = fmt.Sprint(sh.Leader)
		}
		var reps []string
		for _, r := range sh.Replicas {
			switch {
			case !r.Up:
				state := StateDown
				if n, ok := s.Node(r.Node); ok {
					state = n.State
				}
				reps = append(reps, fmt.Sprintf("%d: %s", r.Node, state))
			case r.IsLeader:
				reps = append(reps, fmt.Sprintf("%d*: %d/%d", r.Node, r.Term, r.Applied))
			default:
				reps = append(reps, fmt.Sprintf("%d: %d/%d", r.Node, r.Term, r.Applied))
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", sh.ID, leader, sh.Term, strings.Join(reps, "  "))
	}
	tw.Flush()
	b.WriteString("\n")
	if s.Healthy {
		b.WriteString("healthy: every node is up and every shard has a leader\n")
	} else {
		b.WriteString("not healthy:\n")
		for _, p := range s.Problems {
			fmt.Fprintf(&b, "  - %s\n", p)
		}
	}
	return b.String()
}

func joinIDs[T ~uint64](ids []T) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(uint64(id))
	}
	return strings.Join(s, ", ")
}
