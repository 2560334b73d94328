package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/cairndb/cairn/internal/topology"
)

// A storage node deployed by the admin remembers its place in the store:
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

func loadMembership(root string) (membership, bool, error) {
	var m membership
	b, err := os.ReadFile(filepath.Join(root, membershipFile))
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	} else if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("%s is corrupt: %w", filepath.Join(root, membershipFile), err)
	}
	return m, true, nil
}

func (m membership) save(root string) error {
	b, _ := json.MarshalIndent(m, "", "  ")
	return writeFileAtomic(filepath.Join(root, membershipFile), append(b, '\n'))
}

func (m membership) clone() membership {
	m.Peers = maps.Clone(m.Peers)
	m.Stopped = slices.Clone(m.Stopped)
	return m
}
