package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
)

// RejoinConfig is what a storage node that lost its whole root needs to
// come back under its old id (cairn sn start --rejoin-as, Oracle's
// generateconfig): show rejoin-config -sn snN answers it as JSON. The node
// writes its config.json (the old uid, address and capacity),
// membership.json, node.json marker and topology.json from it, then starts
// as a member whose data is gone: every replica it hosts (and its admin)
// rejoins through its group's leader and catches up by snapshot.
type RejoinConfig struct {
	Store    string            `json:"store"`
	SN       uint64            `json:"sn"`
	UID      string            `json:"uid"`
	Host     string            `json:"host"`
	Port     int               `json:"port"`
	Capacity int               `json:"capacity"`
	Admin    bool              `json:"admin"` // it hosted an admin replica
	Peers    map[uint64]string `json:"peers"`
	Topology json.RawMessage   `json:"topology,omitempty"` // the deployed topology, if any
}

// showRejoinConfig answers show rejoin-config -sn snN. It refuses an
// unknown id, a node that plan migrate-sn replaced (Gone), and a node that
// still answers as that member of the store: two processes must never act
// as one id.
func (s *Service) showRejoinConfig(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	id, err := parseID(a["sn"], "sn")
	if err != nil {
		return nil, usageError("-sn: %v", err)
	}
	sn := m.sn(id)
	if sn == nil {
		return nil, notFound("store %s has no storage node %s: give the id the lost node had (show topology lists them)", m.Store, snName(id))
	}
	if sn.Gone {
		return nil, failed("%s was marked gone by plan migrate-sn and its replicas moved off; it cannot rejoin: remove it with plan remove-sn -sn %s, and deploy the new root as a new node (cairn sn init, plan deploy-sn)",
			snName(sn.ID), snName(sn.ID))
	}
	dctx, cancel := context.WithTimeout(ctx, goneWait)
	info, err := s.control(sn.Addr()).Describe(dctx, &controlpb.DescribeRequest{})
	cancel()
	if err == nil && info.GetStore() == m.Store && info.GetSnId() == sn.ID {
		return nil, failed("%s still answers at %s as a member of store %s: it has not lost its root, so it cannot be replaced under its id; stop it first if it must be rebuilt",
			snName(sn.ID), sn.Addr(), m.Store)
	}
	rc := RejoinConfig{Store: m.Store, SN: sn.ID, UID: sn.UID, Host: sn.Host, Port: sn.Port, Capacity: sn.Capacity,
		Admin: slices.Contains(m.Admins, sn.ID) || slices.Contains(s.adminMembers(), sn.ID), Peers: m.peers()}
	if m.Deployed != nil {
		if rc.Topology, err = json.Marshal(m.Deployed); err != nil {
			return nil, err
		}
	}
	text := fmt.Sprintf("%s of store %s at %s (uid %s, capacity %d, admin %v). Start it on an empty root with:\n  cairn sn start --root NEW --rejoin-as %s --helper-hosts HOST:PORT",
		snName(sn.ID), m.Store, sn.Addr(), sn.UID, sn.Capacity, rc.Admin, snName(sn.ID))
	return reply(text, rc)
}
