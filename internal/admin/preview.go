package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/topology"
)

// sizeTimeout bounds each PartitionSizes call of topology preview: a
// replica's node that does not answer in time leaves its sizes unknown,
// and the next replica's node is asked.
const sizeTimeout = 3 * time.Second

// notCounted is what preview's sizes leave out: they are estimated from
// the sstables, and the memtable's writes are not in them yet.
const notCounted = "not counting writes still in memory"

// moveDoc is one partition move in topology preview's JSON; Bytes is -1
// when no node of the source shard said.
type moveDoc struct {
	Partition keys.PartitionID `json:"partition"`
	From      string           `json:"from"`
	To        string           `json:"to"`
	Bytes     int64            `json:"bytes"`
}

// previewChanges answers topology preview of candidate c over the deployed
// topology: a summary line (what Compare lists, the partitions to move and
// the bytes to copy), Diff's lines grouped by kind, then one line per
// partition move with its size on disk as a node of the source shard
// estimates it (storage.Engine.EstimatePartitionBytes: the sstables only,
// so writes still in the memtable are not counted, and the text says so):
//
//	Topology transformation from the deployed topology (T0, sequence 1) to T:
//	  3 new storage nodes (sn4, sn5, sn6); 2 new shards (rg3, rg4); 50 partitions move; 1.3 MB on disk to copy (not counting writes still in memory)
//	  add storage node sn4 at 127.0.0.1:5004 (zone "z", capacity 2)
//	  ...
//	  move 25 partitions from rg1 to rg3
//	Partition moves (sizes on disk, not counting writes still in memory):
//	  partition 25: rg1 -> rg3, 27 KB
//	  partition 26: rg1 -> rg3, size unknown
func (s *Service) previewChanges(ctx context.Context, m *Meta, c *Candidate) (*cairnpb.AdminReply, error) {
	ch, err := topology.Compare(m.Deployed, c.Topology)
	if err != nil {
		return nil, cannotDeploy(m, c, err)
	}
	sizes := s.moveSizes(ctx, m, ch)
	var total int64
	var unknown []topology.ShardID
	moves := make([]moveDoc, len(ch.Moves))
	for i, mv := range ch.Moves {
		b, ok := sizes[mv.Partition]
		if !ok {
			b = -1
			unknown = append(unknown, mv.From)
		} else {
			total += b
		}
		moves[i] = moveDoc{mv.Partition, topology.ShardName(mv.From), topology.ShardName(mv.To), b}
	}
	summary := changeSummary(ch)
	if len(moves) > 0 {
		summary += "; " + bytesText(total) + " on disk to copy (" + notCounted + ")"
		if n := len(unknown); n > 0 {
			slices.Sort(unknown)
			summary += fmt.Sprintf(", plus %s of unknown size (no storage node of %s answered)", countNoun(n, "partition"), shardIDs(slices.Compact(unknown)))
		}
	}
	lines := topology.Diff(m.Deployed, c.Topology)
	var b strings.Builder
	fmt.Fprintf(&b, "Topology transformation from the deployed topology (%s, sequence %d) to %s:\n  %s", m.DeployedName, m.Deployed.Seq, c.Name, summary)
	for _, l := range lines {
		b.WriteString("\n  " + l)
	}
	if len(moves) > 0 {
		b.WriteString("\nPartition moves (sizes on disk, " + notCounted + "):")
	}
	for _, mv := range moves {
		size := bytesText(mv.Bytes)
		if mv.Bytes < 0 {
			size = "size unknown"
		}
		fmt.Fprintf(&b, "\n  partition %d: %s -> %s, %s", mv.Partition, mv.From, mv.To, size)
	}
	return reply(b.String(), map[string]any{"name": c.Name, "deployed": m.DeployedName, "sequence": m.Deployed.Seq,
		"summary": summary, "changes": lines, "compare": ch, "moves": moves, "bytes": total, "unknown_sizes": len(unknown)})
}

// moveSizes asks, for each shard that partitions move from, its replicas'
// nodes (the preferred leader's first) for the sizes of its partitions,
// in ch's numbering, all shards at once. A shard none of whose nodes
// answers within sizeTimeout is left out.
func (s *Service) moveSizes(ctx context.Context, m *Meta, ch topology.Changes) map[keys.PartitionID]int64 {
	want := m.Deployed.Partitions
	if ch.Split != 0 {
		want = ch.Split
	}
	moving := make(map[topology.ShardID][]keys.PartitionID)
	for _, mv := range ch.Moves {
		moving[mv.From] = append(moving[mv.From], mv.Partition)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := make(map[keys.PartitionID]int64)
	for id, parts := range moving {
		sh, ok := m.Deployed.Shard(id)
		if !ok {
			continue
		}
		wg.Go(func() {
			for _, n := range preferredFirst(sh) {
				sn := m.sn(uint64(n))
				if sn == nil {
					continue
				}
				cctx, cancel := context.WithTimeout(ctx, sizeTimeout)
				r, err := s.control(sn.Addr()).PartitionSizes(cctx, &controlpb.PartitionSizesRequest{Store: m.Store, Shard: uint64(id), Partitions: ch.Split})
				cancel()
				if err != nil || r.GetPartitions() != want {
					continue
				}
				mu.Lock()
				for _, p := range parts {
					if b, ok := r.GetBytes()[uint32(p)]; ok {
						out[p] = b
					}
				}
				mu.Unlock()
				return
			}
		})
	}
	wg.Wait()
	return out
}

func preferredFirst(s topology.Shard) []topology.NodeID {
	out := []topology.NodeID{}
	if s.Preferred != 0 {
		out = append(out, s.Preferred)
	}
	for _, r := range s.Replicas {
		if r != s.Preferred {
			out = append(out, r)
		}
	}
	return out
}

// cannotDeploy is the refusal of a candidate that Compare refuses over
// the deployed topology.
func cannotDeploy(m *Meta, c *Candidate, err error) error {
	if e := asTopologyError(err); e != nil {
		err = e
	}
	return failed("topology %s cannot be deployed over the deployed topology %s: %v", c.Name, m.DeployedName, err)
}
