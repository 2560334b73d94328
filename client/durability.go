package client

import (
	"fmt"

	"github.com/cairndb/cairn/api/cairnpb"
)

// SyncPolicy decides what a node does with a write before acknowledging it.
// The zero value means "the default": the Config's value for a per-operation
// Durability, and the documented default for Config itself.
type SyncPolicy int

// The sync policies, numbered as on the wire.
const (
	// Sync fsyncs the write before the ack: it survives power loss.
	Sync SyncPolicy = 1
	// WriteNoSync writes to the operating system before the ack: it survives
	// a process crash but not power loss.
	WriteNoSync SyncPolicy = 2
	// NoSync may leave the write buffered in the process.
	NoSync SyncPolicy = 3
)

func (p SyncPolicy) String() string {
	switch p {
	case 0:
		return "DEFAULT"
	case Sync:
		return "SYNC"
	case WriteNoSync:
		return "WRITE_NO_SYNC"
	case NoSync:
		return "NO_SYNC"
	}
	return fmt.Sprintf("SyncPolicy(%d)", int(p))
}

// AckPolicy decides how many replicas must hold a write before the ack. The
// zero value means "the default", as for SyncPolicy.
type AckPolicy int

// The ack policies, numbered as on the wire.
const (
	AckAll            AckPolicy = 1 // every replica
	AckSimpleMajority AckPolicy = 2 // a majority of the replicas
	AckNone           AckPolicy = 3 // the leader only
)

func (p AckPolicy) String() string {
	switch p {
	case 0:
		return "DEFAULT"
	case AckAll:
		return "ALL"
	case AckSimpleMajority:
		return "SIMPLE_MAJORITY"
	case AckNone:
		return "NONE"
	}
	return fmt.Sprintf("AckPolicy(%d)", int(p))
}

// Durability says how durable a write is when it is acknowledged.
type Durability struct {
	MasterSync  SyncPolicy // what the leader does; default WriteNoSync
	ReplicaSync SyncPolicy // what each acking replica does; default NoSync
	ReplicaAck  AckPolicy  // how many replicas ack; default AckSimpleMajority
}

// DefaultDurability is the durability a client uses when Config.Durability
// leaves a field zero.
var DefaultDurability = Durability{MasterSync: WriteNoSync, ReplicaSync: NoSync, ReplicaAck: AckSimpleMajority}

// or returns d with each zero field taken from def.
func (d Durability) or(def Durability) Durability {
	if d.MasterSync == 0 {
		d.MasterSync = def.MasterSync
	}
	if d.ReplicaSync == 0 {
		d.ReplicaSync = def.ReplicaSync
	}
	if d.ReplicaAck == 0 {
		d.ReplicaAck = def.ReplicaAck
	}
	return d
}

func (d Durability) String() string {
	return fmt.Sprintf("{master %v, replica %v, ack %v}", d.MasterSync, d.ReplicaSync, d.ReplicaAck)
}

func (d Durability) toPB() *cairnpb.Durability {
	return &cairnpb.Durability{
		MasterSync:  cairnpb.SyncPolicy(d.MasterSync),
		ReplicaSync: cairnpb.SyncPolicy(d.ReplicaSync),
		ReplicaAck:  cairnpb.ReplicaAckPolicy(d.ReplicaAck),
	}
}
