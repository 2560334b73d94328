package node

import (
	"maps"
	"path/filepath"
	"slices"

	"github.com/cairndb/cairn/internal/storage/files"
	"github.com/cairndb/cairn/internal/topology"
)

// A storage node deployed by the admin remembers its place in the store,
// in a checked file (its "data" is shown):
//
//	ROOT/membership.json
//	{
//	  "store": "kvstore",
//	  "sn": 2,                           its id, given by plan deploy-sn
//	  "peers": {"1": "127.0.0.1:5000"},  other nodes, until a topology lists them
//	  "admin": true,                     hosts an admin replica (ROOT/admin)
//	  "admin_founder": false,            started the admin group (configure)
//	  "stopped": [3]                     shards stopped by plan stop-service
//	}
//
// It is written (atomically, synced) before the node acts on a change, so a
// node that crashes redoes the change on the admin's retry.
const membershipFile = "membership.json"

type membership struct {
	Store        string                     `json:"store"`
	SN           topology.NodeID            `json:"sn"`
	Peers        map[topology.NodeID]string `json:"peers,omitempty"`
	Admin        bool                       `json:"admin,omitempty"`
	AdminFounder bool                       `json:"admin_founder,omitempty"`
	Stopped      []uint64                   `json:"stopped,omitempty"`
}

// loadMembership reads ROOT/membership.json; ok is false if there is none.
func loadMembership(fs files.FS, root string) (m membership, ok bool, err error) {
	err = readChecked(fs, filepath.Join(root, membershipFile), &m)
	if files.IsNotExist(err) {
		return membership{}, false, nil
	}
	return m, err == nil, err
}

func (m membership) save(fs files.FS, root string) error {
	return files.WriteJSON(fs, filepath.Join(root, membershipFile), m)
}

func (m membership) clone() membership {
	m.Peers = maps.Clone(m.Peers)
	m.Stopped = slices.Clone(m.Stopped)
	return m
}
