package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/topology"
)

// A storage node heals its storage from its peers (the design's "Healing a
// storage node", docs/design/20261125_storage_faults.md):
//
//	ok --corrupt at open / corrupt while running / fault recorded--> aside
//	aside: replicas closed, engine closed, DATA renamed DATA.corrupt-<UTC>
//	       (aside.go), incident written to ROOT/incidents.json (incidents.go)
//	  --> rebuilding: a fresh engine; every replica opens silent (mustRejoin)
//	       and asks its shard's leader to readmit it (rejoin.go), then
//	       installs a snapshot
//	  --> ok: every replica was readmitted and applied a snapshot; the
//	       incident is resolved (watchRebuild)
//
// Invariants:
//   - Nothing is deleted: the old files stay in the aside directory.
//   - A node heals only if it was a member of the store (ROOT/node.json or
//     ROOT/membership.json, with a topology) and every shard it hosts has
//     another replica; otherwise it refuses to start (at open) or keeps
//     serving reads with writes refused (while running), naming the shard.
//   - While running, the engine is swapped only with every replica closed
//     and no request using the engine (serveMu held for writing), under
//     ctlMu, so control changes and shutdown never see half a heal.

// openEngine opens the node's engine at start. An engine that cannot be
// proven whole (corrupt, or stopped by a fatal I/O error) is set aside and
// replaced by a fresh one when the node can rebuild every shard it hosts
// from its peers; otherwise the node refuses to start, saying why and how
// to restore.
func (n *SN) openEngine(topo *topology.Topology, joined bool) error {
	sc := n.engineConfig()
	e, err := storage.Open(sc)
	if err == nil {
		n.eng.Store(e)
		return nil
	}
	kind := incidentKind(err)
	if kind == "" {
		return err
	}
	shards, why, rerr := n.rebuildable(topo, joined)
	switch {
	case rerr != nil:
		return fmt.Errorf("%w (and %w)", err, rerr)
	case why != "":
		return fmt.Errorf("%w%s; this node does not start: %s", err, unchanged(err), why)
	}
	in, aerr := n.setAside(sc.Dir, kind, err, shards, false)
	if aerr != nil {
		return fmt.Errorf("%w; and setting it aside failed: %w", err, aerr)
	}
	if e, err = storage.Open(sc); err != nil {
		return fmt.Errorf("opening a fresh engine in %s after setting the old files aside in %s: %w", sc.Dir, in.AsideDir, err)
	}
	n.eng.Store(e)
	n.forceRejoin.Store(true)
	n.log.Warn(healLine(in, "the store in "+sc.Dir+" cannot be proven whole"))
	return nil
}

// healOpening heals corruption found while the replicas open at start (a
// read of a block the engine's open does not prove, such as a shard's Raft
// state or log) as openEngine heals what the open finds: the engine is set
// aside and replaced, and the replicas open again, to rebuild from their
// peers. Any other error is returned as it is. Nothing serves yet.
func (n *SN) healOpening(topo *topology.Topology, cause error) error {
	e := n.engine()
	if !errors.Is(cause, storage.ErrCorrupt) || e.Corrupt() == nil {
		return cause
	}
	shards, why, err := n.rebuildable(topo, n.member.Store != "")
	switch {
	case err != nil:
		return fmt.Errorf("%w (and %w)", cause, err)
	case why != "":
		return fmt.Errorf("%w; this node does not start: %s", cause, why)
	}
	n.closeReplicas()
	in, err := n.swapEngine(e, cause, shards)
	if err != nil {
		return fmt.Errorf("%w; and setting it aside failed: %w", cause, err)
	}
	n.log.Warn(healLine(in, "corruption was found in the store in "+n.cfg.dataDir()+" while its replicas opened"))
	return n.openTopology(topo)
}

// healLine is the one log line of a heal: what happened, where the old
// files are, and that the node rebuilds from its peers.
func healLine(in incident, what string) string {
	what += fmt.Sprintf(" (%s)", in.Detail)
	if in.Admin {
		return fmt.Sprintf("%s; its files were moved to %s (kept for inspection) and this node rebuilds its admin replica from the other admins (incident %d)",
			what, in.AsideDir, in.Seq)
	}
	their := "their"
	if len(in.Shards) == 1 {
		their = "its"
	}
	return fmt.Sprintf("%s; its files were moved to %s (kept for inspection) and this node rebuilds %s from %s peers (incident %d)",
		what, in.AsideDir, shardList(in.Shards), their, in.Seq)
}

// shardList names shards: "shards rg1, rg2", "shard rg1", "no shard".
func shardList(shards []uint64) string {
	names := make([]string, len(shards))
	for i, s := range shards {
		names[i] = topology.ShardName(topology.ShardID(s))
	}
	switch len(names) {
	case 0:
		return "no shard"
	case 1:
		return "shard " + names[0]
	}
	return "shards " + strings.Join(names, ", ")
}

// rebuildable returns the shards this node hosts if it can rebuild all of
// them from their peers, or why not (with what to do).
func (n *SN) rebuildable(topo *topology.Topology, joined bool) ([]uint64, string, error) {
	dir := n.cfg.dataDir()
	marked, err := n.marked(topo)
	switch {
	case err != nil:
		return nil, "", err
	case topo == nil || (!joined && !marked):
		return nil, fmt.Sprintf("this node hosts no replica of a store, so there is nothing to rebuild it from: move %s aside", dir), nil
	}
	var shards []uint64
	for _, s := range topo.ShardsOn(n.id()) {
		if len(s.Replicas) < 2 {
			return nil, fmt.Sprintf("shard %s has no other replica to rebuild it from. "+
				"Restore the store from a snapshot: move %s aside, then run cairn sn restore --root %s --snapshot NAME on every node of the store while all are stopped; "+
				"or restore %s from a copy taken while the node was stopped",
				topology.ShardName(s.ID), dir, n.cfg.Root, n.cfg.Root), nil
		}
		shards = append(shards, uint64(s.ID))
	}
	return shards, "", nil
}

// unchanged says that nothing was changed, unless err says so already.
func unchanged(err error) string {
	if strings.Contains(err.Error(), "nothing was changed") {
		return ""
	}
	return "; nothing was changed"
}

// setAside moves an engine's directory aside and records the incident.
func (n *SN) setAside(dir, kind string, cause error, shards []uint64, admin bool) (incident, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	aside, err := moveAside(n.cfg.FS, dir, now)
	if err != nil {
		return incident{}, err
	}
	// The refusal's "nothing was changed" held until this rename.
	detail := strings.TrimSuffix(cause.Error(), "; nothing was changed or deleted")
	return n.incidents.add(incident{Time: now, Kind: kind, Detail: detail, AsideDir: aside, Shards: shards, Admin: admin})
}

// onCorruption is the engine's Config.OnCorruption: corruption found while
// the node runs (a read, a compaction, a scrub). The node heals in
// process: it stops its replicas, sets the files aside, opens a fresh
// engine and rejoins every shard.
func (n *SN) onCorruption(cause error) {
	select {
	case <-n.started:
	case <-n.closing:
		return
	}
	n.ctlMu.Lock()
	defer n.ctlMu.Unlock()
	e := n.engine()
	if n.closed() || e == nil || e.Corrupt() == nil {
		return // stopping, or an engine a heal already replaced
	}
	shards, why, err := n.rebuildable(n.topology(), n.member.Store != "")
	if err != nil || why != "" {
		n.log.Error("storage corruption found while running, and this node cannot rebuild from its peers: it serves reads and refuses writes",
			"err", cause, "why", why, "check_err", err)
		return
	}
	if err := n.healRunning(e, cause, shards); err != nil {
		n.fatal(fmt.Errorf("healing the node's storage failed: %w", err))
	}
}

// healRunning replaces the running engine e, found corrupt, with a fresh
// one and rejoins every shard. The caller holds ctlMu.
func (n *SN) healRunning(e *storage.Engine, cause error, shards []uint64) error {
	n.log.Warn("storage corruption found while running: stopping this node's replicas to set its files aside", "err", cause)
	n.healing.Store(true)
	defer n.healing.Store(false)
	n.closeReplicas()
	n.scrub.stop() // scrubs read the engine directly: none may outlive it
	n.blocks.stop()
	n.serveMu.Lock()
	in, err := n.swapEngine(e, cause, shards)
	n.serveMu.Unlock()
	if err != nil {
		return err
	}
	n.scrub = startScrub(n.engine(), n.cfg.Scrub, n.log)
	if _, err := n.openReplicas(n.topology()); err != nil {
		return err
	}
	n.log.Warn(healLine(in, "corruption was found in the store in "+n.cfg.dataDir()+" while running"))
	n.rejoinAll()
	return nil
}

// closeReplicas hands leadership off and closes every data replica; the
// map is empty afterwards, and requests meanwhile answer "rejoining".
func (n *SN) closeReplicas() {
	n.handoff()
	n.mu.Lock()
	reps := n.replicas
	n.replicas = make(map[uint64]*replica.Raft)
	n.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range reps {
		wg.Add(1)
		go func() { defer wg.Done(); r.Close() }()
	}
	wg.Wait()
}

// swapEngine closes e, sets its directory aside and opens a fresh engine.
// The caller holds serveMu for writing: nothing uses e.
func (n *SN) swapEngine(e *storage.Engine, cause error, shards []uint64) (incident, error) {
	if err := e.Close(); err != nil {
		n.log.Warn("closing the corrupt engine failed; setting its files aside anyway", "err", err)
	}
	sc := n.engineConfig()
	in, err := n.setAside(sc.Dir, kindCorrupt, cause, shards, false)
	if err != nil {
		return in, err
	}
	fresh, err := storage.Open(sc)
	if err != nil {
		return in, fmt.Errorf("opening a fresh engine in %s: %w", sc.Dir, err)
	}
	n.eng.Store(fresh)
	n.forceRejoin.Store(true)
	return in, nil
}

// fatalExit ends the process when a heal cannot finish; tests replace it.
var fatalExit = func(code int) { os.Exit(code) }

// fatal logs err and exits with status 70, as a fatal storage error does:
// the next start finds the files and heals or refuses there.
func (n *SN) fatal(err error) {
	n.log.Error("fatal storage error; exiting", "err", err)
	fatalExit(70)
}

// rebuilding reports whether r still rebuilds from its peers: it waits to
// be readmitted, or for its first snapshot (an empty engine has applied
// nothing; every shard's log starts at index 5).
func rebuilding(r *replica.Raft) bool { return r.Rejoining() || r.AppliedIndex() == 0 }

// rebuilt reports whether every replica this node runs (the admin's, for
// admin) was readmitted and applied a snapshot.
func (n *SN) rebuilt(admin bool) bool {
	n.ctlMu.Lock()
	defer n.ctlMu.Unlock()
	if admin {
		h := n.admin.Load()
		return h != nil && !rebuilding(h.rep)
	}
	t := n.topology()
	if t == nil || n.healing.Load() {
		return false
	}
	for _, s := range t.ShardsOn(n.id()) {
		if slices.Contains(n.member.Stopped, uint64(s.ID)) {
			continue
		}
		if r := n.replica(uint64(s.ID)); r == nil || rebuilding(r) {
			return false
		}
	}
	return true
}

// watchRebuild resolves the node's open incidents once it has rebuilt
// (rebuilt), until the node closes.
func (n *SN) watchRebuild() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-n.closing:
			return
		case <-t.C:
		}
		for _, admin := range []bool{false, true} {
			if !n.incidents.unresolved(admin) || !n.rebuilt(admin) {
				continue
			}
			done, err := n.incidents.resolve(admin)
			if err != nil {
				n.log.Warn("recording a finished rebuild failed; retrying", "err", err)
				continue
			}
			for _, in := range done {
				n.log.Info("storage rebuilt from peers: every replica was readmitted and applied a snapshot",
					"incident", in.Seq, "old_files", in.AsideDir, "took", in.ResolvedTime.Sub(in.Time).Round(time.Millisecond))
			}
		}
	}
}

// enter lets a request use the engine until its release: it fails with
// replica.ErrRejoining while a heal is under way.
func (n *SN) enter() (release func(), err error) {
	if n.healing.Load() {
		return nil, errHealing(n.id()) // without queueing behind the heal's lock
	}
	n.serveMu.RLock()
	if n.healing.Load() {
		n.serveMu.RUnlock()
		return nil, errHealing(n.id())
	}
	return n.serveMu.RUnlock, nil
}

// errHealing is the answer of a node whose replicas are closed for a heal.
func errHealing(id topology.NodeID) error {
	return fmt.Errorf("%w: %s found its storage corrupt and is rebuilding it from its peers; another replica must serve the request",
		replica.ErrRejoining, topology.NodeName(id))
}

// adminDir is ROOT/admin, the admin replica's engine.
func (n *SN) adminDir() string { return filepath.Join(n.cfg.Root, "admin") }
