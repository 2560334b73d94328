package client

import (
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
)

// Record is a key with its value, version and expiration.
type Record struct {
	Key     Key
	Value   []byte // nil for records returned by the *Keys operations
	Version Version
	// Expiration is when the record stops being visible; the zero time means
	// it never expires. It has millisecond precision.
	Expiration time.Time
}

func recordFromPB(p *cairnpb.Record) Record {
	return Record{
		Key:        keyFromPB(p.GetKey()),
		Value:      p.GetValue(),
		Version:    Version(p.GetVersion()),
		Expiration: timeFromMillis(p.GetExpirationMs()),
	}
}

// timeFromMillis maps Unix milliseconds to a time; 0 means "never", the zero
// time.
func timeFromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// StoreInfo describes the store a client is connected to.
type StoreInfo struct {
	Store         string // the store's name
	Partitions    int    // the number of partitions
	ServerVersion string // the Cairn build version of the node that answered
	Limits        Limits
	// TopologySeq is the answering node's topology sequence number; 0 for
	// cairn lite, which has no topology.
	TopologySeq uint64
}

// Limits are the server's size limits. The server enforces them; a request
// over one fails with ErrLimitExceeded.
type Limits struct {
	MaxKeyBytes   int64 // sum of a key's component lengths, in bytes
	MaxValueBytes int64 // a value's length, in bytes
	MaxComponents int   // major plus minor components of a key
	// MaxTimeout caps an operation's timeout on the server (0: the server
	// did not say); MaxResultBytes bounds one MultiGet or scan page.
	MaxTimeout     time.Duration
	MaxResultBytes int64
}

func storeInfoFromPB(p *cairnpb.StoreInfoResponse) StoreInfo {
	l := p.GetLimits()
	return StoreInfo{
		Store:         p.GetStore(),
		Partitions:    int(p.GetPartitions()),
		ServerVersion: p.GetVersion(),
		TopologySeq:   p.GetTopologySeq(),
		Limits: Limits{
			MaxKeyBytes:    l.GetMaxKeyBytes(),
			MaxValueBytes:  l.GetMaxValueBytes(),
			MaxComponents:  int(l.GetMaxComponents()),
			MaxTimeout:     time.Duration(l.GetMaxTimeoutMs()) * time.Millisecond,
			MaxResultBytes: l.GetMaxResultBytes(),
		},
	}
}
