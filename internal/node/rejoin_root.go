package node

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/cairndb/cairn/internal/admin"
	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// WriteRejoinRoot prepares root, a new root of a storage node that lost its
// old one, to start as node rc.SN of store rc.Store (cairn sn start
// --rejoin-as; rc comes from the admin's show rejoin-config):
//
//	ROOT/config.json      the old uid, address and capacity
//	ROOT/membership.json  store, id, peers, whether it hosts an admin
//	ROOT/node.json        the marker: this root was that member (rejoin.go)
//	ROOT/topology.json    the deployed topology
//
// With the marker there and no Raft state in its engine, each replica the
// node hosts, and its admin, rejoins through its group's leader and
// catches up by snapshot. It refuses a root that holds another node's
// config or membership; run again on the same root, it changes nothing.
func WriteRejoinRoot(fs files.FS, root string, rc admin.RejoinConfig) error {
	if err := fs.MkdirAll(root, 0o755); err != nil {
		return err
	}
	switch old, err := LoadInit(fs, root); {
	case err == nil && old.UID != rc.UID:
		return fmt.Errorf("%s holds the config of another node (uid %s, not sn%d's %s): give an empty root", filepath.Join(root, InitFile), old.UID, rc.SN, rc.UID)
	case err != nil && !files.IsNotExist(err):
		return err
	case err != nil:
		ic := InitConfig{UID: rc.UID, Host: rc.Host, Port: rc.Port, Capacity: rc.Capacity, Created: time.Now().UTC().Truncate(time.Second)}
		if err := files.WriteJSON(fs, filepath.Join(root, InitFile), ic); err != nil {
			return err
		}
	}
	m, ok, err := loadMembership(fs, root)
	if err != nil {
		return err
	}
	if ok && (m.Store != rc.Store || uint64(m.SN) != rc.SN) {
		return fmt.Errorf("%s says this root is sn%d of store %q, not sn%d of %q: give an empty root", filepath.Join(root, membershipFile), m.SN, m.Store, rc.SN, rc.Store)
	}
	if !ok {
		m = membership{Store: rc.Store, SN: topology.NodeID(rc.SN), Admin: rc.Admin, Peers: map[topology.NodeID]string{}}
		for id, a := range rc.Peers {
			m.Peers[topology.NodeID(id)] = a
		}
		if err := m.save(fs, root); err != nil {
			return err
		}
	}
	if len(rc.Topology) > 0 {
		t, err := topology.Decode(rc.Topology)
		if err != nil {
			return err
		}
		if err := files.WriteJSON(fs, filepath.Join(root, topology.FileName), t); err != nil {
			return err
		}
	}
	return files.WriteJSON(fs, filepath.Join(root, markerFile), marker{Node: topology.NodeID(rc.SN), Store: rc.Store})
}
