package admin

import (
	"fmt"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
)

// The admin leader polls the storage nodes (Describe, every
// incidentPoll), installs the deployed topology on any that missed its
// publication (syncTopologies), and records each storage incident a node reports (its
// ROOT/incidents.json, internal/node) in show events: once when it is new,
// once more when it is resolved. Meta.StorageIncidents keeps, per node,
// the last incident sequence recorded each way, so a new leader does not
// record them again. The same answers feed the rebuild of replicas that
// cannot follow their leader (repair_stuck.go). Only the leader polls; it
// stops when it loses the leadership or the service closes.
const incidentPoll = 2 * time.Second

// IncidentMark is what show events has recorded of a node's storage
// incidents: the last sequence recorded as new, and as resolved.
type IncidentMark struct {
	Reported int64 `json:"reported"`
	Resolved int64 `json:"resolved"`
}

// incidentLoop polls the nodes for storage incidents while this replica
// leads, until the service closes.
func (s *Service) incidentLoop() {
	defer s.wg.Done()
	t := time.NewTicker(incidentPoll)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if s.cfg.Replica.IsLeader() {
			s.pollIncidents()
		} else {
			s.repairMarks = nil // a leader again waits RepairStuckAfter afresh
		}
	}
}

// pollIncidents records the incidents the nodes report that show events
// lacks.
func (s *Service) pollIncidents() {
	ctx, cancel := s.leaderContext()
	defer cancel()
	m, _, err := s.store.load(ctx)
	if err != nil {
		return
	}
	infos := s.describeSNs(ctx, m.SNs)
	s.syncTopologies(ctx, m, infos)
	s.repairStuck(ctx, m, infos)
	if !recordIncidents(m.clone(), infos) {
		return
	}
	_, err = s.store.update(ctx, func(m *Meta) error {
		recordIncidents(m, infos)
		return nil
	})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("recording storage incidents in show events failed; the next poll retries", "err", err)
	}
}

// recordIncidents adds to m's events each incident in infos that m has not
// recorded, as new and as resolved; it reports whether it added any.
func recordIncidents(m *Meta, infos map[uint64]*controlpb.NodeInfo) bool {
	added := false
	for _, sn := range m.SNs {
		mark := m.StorageIncidents[sn.ID]
		before := mark
		for _, in := range infos[sn.ID].GetStorage().GetIncidents() {
			if in.GetSeq() > mark.Reported {
				m.event("%s", incidentText(sn.ID, in))
				mark.Reported = in.GetSeq()
			}
			if in.GetResolved() && in.GetSeq() > mark.Resolved {
				m.event("%s", resolvedText(sn.ID, in))
				mark.Resolved = in.GetSeq()
			}
		}
		if mark != before {
			if m.StorageIncidents == nil {
				m.StorageIncidents = map[uint64]IncidentMark{}
			}
			m.StorageIncidents[sn.ID] = mark
			added = true
		}
	}
	return added
}

// incidentText is the event of a new incident: "sn2: storage corrupt:
// DETAIL; old files kept in DIR; rebuilding shards rg1, rg2 from their
// peers".
func incidentText(sn uint64, in *controlpb.Incident) string {
	their := "their"
	if len(in.GetShards()) == 1 {
		their = "its"
	}
	what, from := "storage", fmt.Sprintf("rebuilding %s from %s peers", shardsText(in.GetShards()), their)
	if in.GetAdmin() {
		what, from = "admin storage", "rebuilding the admin replica from the other admins"
	}
	return fmt.Sprintf("%s: %s %s: %s; old files kept in %s; %s", snName(sn), what, in.GetKind(), in.GetDetail(), in.GetAsideDir(), from)
}

// resolvedText is the event of a resolved incident.
func resolvedText(sn uint64, in *controlpb.Incident) string {
	took := ""
	if in.GetResolvedUnixMs() >= in.GetTimeUnixMs() {
		took = fmt.Sprintf(" in %.1fs", float64(in.GetResolvedUnixMs()-in.GetTimeUnixMs())/1000)
	}
	if in.GetAdmin() {
		return fmt.Sprintf("%s: admin storage rebuilt from the other admins%s", snName(sn), took)
	}
	return fmt.Sprintf("%s: storage rebuilt from peers%s", snName(sn), took)
}

// shardsText is "shards rg1, rg2", "shard rg1" or "no shard".
func shardsText(shards []uint64) string {
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

// clone copies m deeply enough for recordIncidents to change it.
func (m *Meta) clone() *Meta {
	c := *m
	c.Events = append([]Event(nil), m.Events...)
	c.StorageIncidents = make(map[uint64]IncidentMark, len(m.StorageIncidents))
	for k, v := range m.StorageIncidents {
		c.StorageIncidents[k] = v
	}
	return &c
}
