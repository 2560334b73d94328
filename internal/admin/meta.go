package admin

import (
	"fmt"
	"github.com/cairndb/cairn/internal/auth"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/topology"
)

// Meta is the store's metadata: everything the admin knows. It is one JSON
// document, stored as one record in the admin group and replaced as a whole
// by compare-and-set (see store.go), so every change is atomic and ordered.
type Meta struct {
	Store string `json:"store"`
	// BootstrapUID is the uid of the storage node that ran configure; it
	// becomes sn1 when deployed.
	BootstrapUID string `json:"bootstrap_uid"`
	NextSN       uint64 `json:"next_sn"`
	NextZone     int    `json:"next_zone"`
	NextPlan     int    `json:"next_plan"`
	NextEvent    int    `json:"next_event"`

	Zones  []Zone   `json:"zones"`
	SNs    []SN     `json:"sns"`
	Admins []uint64 `json:"admins"` // storage nodes with a deployed admin
	// AdminCleanup lists the storage nodes whose admin plan remove-admin
	// took out of the admin group while the node did not answer: the node
	// still has to drop its replica (run plan remove-admin again).
	AdminCleanup []uint64    `json:"admin_cleanup,omitempty"`
	Pools        []Pool      `json:"pools"`
	Candidates   []Candidate `json:"candidates"`
	// Deployed is the topology the storage nodes run (nil before the first
	// deploy-topology), DeployedName the candidate it came from.
	Deployed     *topology.Topology `json:"deployed,omitempty"`
	DeployedName string             `json:"deployed_name,omitempty"`
	Stopped      []string           `json:"stopped,omitempty"` // services stopped by plan stop-service
	Plans        []*Plan            `json:"plans"`
	Events       []Event            `json:"events"`
	Snapshots    []Snapshot         `json:"snapshots"`
	// StorageIncidents are, per storage node, the last storage incidents
	// recorded in Events (incidents.go).
	StorageIncidents map[uint64]IncidentMark `json:"storage_incidents,omitempty"`
	// Users is a secure store's user table (users.go); nil until the first
	// user command. UsersSeq counts its changes.
	Users    []auth.User `json:"users,omitempty"`
	UsersSeq uint64      `json:"users_seq,omitempty"`
}

// Zone is a group of storage nodes with a replication factor.
type Zone struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	RF   int    `json:"rf"`
	Type string `json:"type"` // primary or secondary
}

// SN is a deployed storage node.
type SN struct {
	ID          uint64   `json:"id"`
	Zone        int      `json:"zone"`
	Host        string   `json:"host"`
	Port        int      `json:"port"`
	Capacity    int      `json:"capacity"`
	UID         string   `json:"uid"`
	StorageDirs []string `json:"storage_dirs,omitempty"`
	// Gone marks a node whose disk is gone for good (plan migrate-sn moves
	// its replicas off): tasks that tell it of a change go on when it does
	// not answer, and it may rejoin only under its old id (sn start
	// -rejoin-as), which clears the mark.
	Gone bool `json:"gone,omitempty"`
}

// Addr is the node's host:port.
func (s SN) Addr() string { return s.Host + ":" + strconv.Itoa(s.Port) }

// Pool is a named set of storage nodes that topologies are laid out on.
type Pool struct {
	Name string   `json:"name"`
	SNs  []uint64 `json:"sns"`
}

// Candidate is a named topology, not yet (or already) deployed.
type Candidate struct {
	Name     string             `json:"name"`
	Pool     string             `json:"pool"`
	Topology *topology.Topology `json:"topology"`
	Created  time.Time          `json:"created"`
}

// Event is one line of the event log.
type Event struct {
	Seq  int       `json:"seq"`
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// Snapshot is a backup taken by snapshot create.
type Snapshot struct {
	Name        string          `json:"name"`
	Time        time.Time       `json:"time"`
	TopologySeq uint64          `json:"topology_seq"`
	Shards      []SnapshotShard `json:"shards"`
}

// SnapshotShard is one shard's part of a snapshot: written by SN (the
// shard's leader) into Path there, then copied to the nodes of the shard's
// other replicas.
type SnapshotShard struct {
	Shard  uint64 `json:"shard"`
	SN     uint64 `json:"sn"`
	Index  uint64 `json:"index"`
	Bytes  uint64 `json:"bytes"`
	CRC32C string `json:"crc32c,omitempty"` // of the data; "" in snapshots taken before copies
	Path   string `json:"path"`
	// Copies are the verified copies on the other replicas' nodes; Missing
	// the replicas' nodes the copy did not reach, with the reason.
	Copies  []SnapshotCopy `json:"copies,omitempty"`
	Missing []SnapshotCopy `json:"missing,omitempty"`
}

// SnapshotCopy is a copy of a shard's snapshot files on one node: Path
// there when it was made, Error when it was not.
type SnapshotCopy struct {
	SN    uint64 `json:"sn"`
	Path  string `json:"path,omitempty"`
	Error string `json:"error,omitempty"`
}

const maxEvents = 500

// event appends a line to the event log, dropping the oldest past maxEvents.
func (m *Meta) event(format string, args ...any) {
	m.NextEvent++
	m.Events = append(m.Events, Event{Seq: m.NextEvent, Time: time.Now().UTC(), Text: fmt.Sprintf(format, args...)})
	if len(m.Events) > maxEvents {
		m.Events = slices.Clone(m.Events[len(m.Events)-maxEvents:])
	}
}

func (m *Meta) zoneByID(id int) *Zone {
	for i := range m.Zones {
		if m.Zones[i].ID == id {
			return &m.Zones[i]
		}
	}
	return nil
}

func (m *Meta) zoneByName(name string) *Zone {
	for i := range m.Zones {
		if strings.EqualFold(m.Zones[i].Name, name) {
			return &m.Zones[i]
		}
	}
	return nil
}

func (m *Meta) sn(id uint64) *SN {
	for i := range m.SNs {
		if m.SNs[i].ID == id {
			return &m.SNs[i]
		}
	}
	return nil
}

func (m *Meta) snByUID(uid string) *SN {
	for i := range m.SNs {
		if m.SNs[i].UID == uid {
			return &m.SNs[i]
		}
	}
	return nil
}

func (m *Meta) pool(name string) *Pool {
	for i := range m.Pools {
		if m.Pools[i].Name == name {
			return &m.Pools[i]
		}
	}
	return nil
}

func (m *Meta) candidate(name string) *Candidate {
	for i := range m.Candidates {
		if m.Candidates[i].Name == name {
			return &m.Candidates[i]
		}
	}
	return nil
}

func (m *Meta) plan(id int) *Plan {
	for _, p := range m.Plans {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// peers maps every deployed storage node to its address.
func (m *Meta) peers() map[uint64]string {
	out := make(map[uint64]string, len(m.SNs))
	for _, s := range m.SNs {
		out[s.ID] = s.Addr()
	}
	return out
}

// snName formats a storage node id the Oracle way: sn3.
func snName(id uint64) string { return "sn" + strconv.FormatUint(id, 10) }

// snNames formats storage node ids as "sn1, sn2".
func snNames(ids []uint64) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = snName(id)
	}
	return strings.Join(out, ", ")
}

// zoneName formats a zone id: zn1.
func zoneName(id int) string { return "zn" + strconv.Itoa(id) }

// parseID accepts "3" or "<prefix>3".
func parseID(s, prefix string) (uint64, error) {
	t := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), prefix)
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is not a %s id; write %s1 or 1", s, idNouns[prefix], prefix)
	}
	return n, nil
}

// idNouns names what each id prefix of parseID identifies.
var idNouns = map[string]string{"sn": "storage node", "zn": "zone", "rg": "shard", "rn": "replica"}

// parseService parses a replication node name rgN-rnM.
func parseService(s string) (shard, sn uint64, err error) {
	rg, rn, ok := strings.Cut(strings.ToLower(s), "-")
	if ok {
		shard, err = parseID(rg, "rg")
		if err == nil {
			sn, err = parseID(rn, "rn")
		}
	}
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("service %q: write rgN-rnM, e.g. rg1-rn2 for shard 1's replica on sn2 (see show topology)", s)
	}
	return shard, sn, nil
}

func serviceName(shard, sn uint64) string { return fmt.Sprintf("rg%d-rn%d", shard, sn) }
