package node

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// The admin's own engine (ROOT/admin) heals like the data engine (heal.go),
// through the admin group instead of the shards: its directory is set
// aside, the replica opens silent and asks the admin leader to readmit it
// (remove, then add back as a voter: Raft forgets what it acknowledged),
// then installs the leader's snapshot. That needs another admin: at start
// the node asks its peers (Describe) which of them host one; while running,
// the replica's own configuration says. A lone admin is never set aside:
// the node refuses to start, or keeps running with the corrupt admin
// engine refusing writes.

// startAdmin opens the admin replica at start, rebuilding it from the
// other admins when its engine cannot be proven whole.
func (n *SN) startAdmin() error {
	err := n.openAdmin(n.member.AdminFounder, false)
	kind := incidentKind(err)
	if kind == "" {
		return err
	}
	dir := n.adminDir()
	asked, others := n.otherAdmins()
	if len(others) == 0 {
		return fmt.Errorf("%w; this node's admin replica (%s) cannot be rebuilt from another admin: none answered (asked %s), so this node does not start and nothing was changed. "+
			"Start the nodes of the other admins, then start this node again; if it was the only admin, restore %s from a copy taken while the node was stopped",
			err, dir, nodeNames(asked), n.cfg.Root)
	}
	in, aerr := n.setAside(dir, kind, err, nil, true)
	if aerr != nil {
		return fmt.Errorf("%w; and setting it aside failed: %w", err, aerr)
	}
	if err := n.openAdmin(false, true); err != nil {
		return fmt.Errorf("opening a fresh admin engine in %s after setting the old files aside in %s: %w", dir, in.AsideDir, err)
	}
	n.log.Warn(healLine(in, "the admin's store in "+dir+" cannot be proven whole"))
	return nil
}

// otherAdmins asks every peer this node knows (2 s each, in parallel)
// whether it hosts an admin replica; it returns the peers asked and those
// that do.
func (n *SN) otherAdmins() (asked, admins []topology.NodeID) {
	n.ctlMu.Lock()
	peers := n.member.clone().Peers
	n.ctlMu.Unlock()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, addr := range peers {
		if id == n.id() {
			continue
		}
		asked = append(asked, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc, err := n.adminConns.Get(addr)
			if err != nil {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if info, err := controlpb.NewControlClient(cc).Describe(ctx, &controlpb.DescribeRequest{}); err == nil && info.GetAdmin() {
				mu.Lock()
				admins = append(admins, id)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(asked)
	return asked, admins
}

// nodeNames is "sn1, sn3", or "no other node" for none.
func nodeNames(ids []topology.NodeID) string {
	if len(ids) == 0 {
		return "no other node: it knows none"
	}
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += topology.NodeName(id)
	}
	return out
}

// onAdminCorruption is the admin engine's Config.OnCorruption: the admin
// replica heals in process when the group has other voters.
func (n *SN) onAdminCorruption(cause error) {
	select {
	case <-n.started:
	case <-n.closing:
		return
	}
	n.ctlMu.Lock()
	defer n.ctlMu.Unlock()
	h := n.admin.Load()
	if n.closed() || h == nil || h.engine.Corrupt() == nil {
		return
	}
	if !slices.ContainsFunc(h.rep.Voters(), func(v uint64) bool { return v != uint64(n.id()) }) {
		n.log.Error("corruption found in the admin's store, and this is the only admin: it cannot be rebuilt from another; the admin refuses writes", "err", cause)
		return
	}
	n.log.Warn("corruption found in the admin's store while running: stopping the admin replica to set its files aside", "err", cause)
	n.admin.Store(nil)
	h.close()
	in, err := n.setAside(n.adminDir(), kindCorrupt, cause, nil, true)
	if err == nil {
		err = n.openAdmin(false, true)
	}
	if err != nil {
		n.fatal(fmt.Errorf("healing the admin's storage failed: %w", err))
		return
	}
	n.log.Warn(healLine(in, "corruption was found in the admin's store in "+n.adminDir()+" while running"))
	go n.rejoin(n.admin.Load().rep)
}
