package migrate

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/internal/replica"
	"github.com/cairndb/cairn/internal/storage"
	"github.com/cairndb/cairn/internal/storage/commandpb"
	"google.golang.org/protobuf/proto"
)

// copyAndHandoff brings the target up to date with the source, then hands
// the partition off: the source's Transfer, then finish.
func (mv *mover) copyAndHandoff(ctx context.Context, se, de *storage.PartEntry) error {
	p := mv.m.Partition
	if err := mv.proposeSrc(ctx, &commandpb.Command{Body: &commandpb.Command_MigrateOut{MigrateOut: &commandpb.MigrateOut{Partition: p, ToShard: mv.m.To}}}); err != nil {
		return err
	}
	attempt, replayed, err := mv.resumeOrCopy(ctx, de, false)
	if err != nil {
		return err
	}
	for { // catch up until the rest is short enough to replay after the handoff
		applied := mv.src.AppliedIndex()
		if applied <= replayed+mv.cfg.HandoffLag {
			break
		}
		if err := mv.replay(ctx, attempt, replayed+1, applied); err != nil {
			return err
		}
		replayed = applied
	}
	mv.report("handoff")
	if err := mv.failpoint(ctx, "handoff"); err != nil {
		return err
	}
	return mv.proposeSrc(ctx, &commandpb.Command{Body: &commandpb.Command_Transfer{Transfer: &commandpb.Transfer{Partition: p, ToShard: mv.m.To}}})
}

// finish completes a handed-off move: the target gets the source's writes
// through the Transfer and is activated.
func (mv *mover) finish(ctx context.Context, se, de *storage.PartEntry) error {
	p, it := mv.m.Partition, se.Index
	attempt, replayed, err := mv.resumeOrCopy(ctx, de, true)
	if err != nil {
		return err
	}
	if replayed+1 < it {
		if err := mv.replay(ctx, attempt, replayed+1, it-1); errors.Is(err, replica.ErrLogCompacted) {
			// The log is gone: the partition is frozen since It, copy it anew.
			if attempt, _, err = mv.newAttempt(ctx, attempt+1, true); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
	}
	versions := maps.Clone(se.Versions)
	if versions == nil {
		versions = map[uint64]uint64{}
	}
	versions[mv.src.Origin()] = it
	mv.report("handoff")
	if err := mv.failpoint(ctx, "activate"); err != nil {
		return err
	}
	_, err = mv.proposeDst(ctx, &commandpb.Command{Body: &commandpb.Command_Activate{Activate: &commandpb.Activate{
		Partition: p, Attempt: attempt, FromShard: mv.m.From, Through: it, Versions: versions}}})
	return err
}

// resumeOrCopy returns the attempt under which the target receives the
// partition and the source index it holds writes through: the target's
// own if it has a complete copy whose log can still be replayed, else
// those of a new attempt, copied now.
func (mv *mover) resumeOrCopy(ctx context.Context, de *storage.PartEntry, frozen bool) (attempt, replayed uint64, err error) {
	if de != nil && de.State == storage.PartIncoming && de.Peer == mv.m.From {
		if de.Copied && mv.logFrom(de.Index+1) {
			return de.Attempt, de.Index, nil
		}
		return mv.newAttempt(ctx, de.Attempt+1, frozen)
	}
	return mv.newAttempt(ctx, 1, frozen)
}

// logFrom reports whether the source's log still holds index i (or i is
// past its applied index).
func (mv *mover) logFrom(i uint64) bool {
	err := mv.src.CommandsIn(i, i, func(uint64, *commandpb.Command) error { return nil })
	return err == nil
}

// newAttempt starts attempt on the target and copies the partition from a
// view of the source; it returns the view's applied index.
func (mv *mover) newAttempt(ctx context.Context, attempt uint64, frozen bool) (uint64, uint64, error) {
	p := mv.m.Partition
	if _, err := mv.proposeDst(ctx, &commandpb.Command{Body: &commandpb.Command_MigrateIn{MigrateIn: &commandpb.MigrateIn{Partition: p, FromShard: mv.m.From, Attempt: attempt}}}); err != nil {
		return 0, 0, err
	}
	view := mv.src.Engine().NewView()
	defer view.Close()
	at, err := view.ShardApplied(mv.src.Shard())
	if err != nil {
		return 0, 0, err
	}
	t, err := view.Table(mv.src.Shard())
	if err != nil {
		return 0, 0, err
	}
	want := storage.PartOutgoing
	if frozen {
		want = storage.PartGone
	}
	if e := t.Parts[p]; e == nil || e.State != want || e.Peer != mv.m.To {
		return 0, 0, fmt.Errorf("migrate: the source's view at %d does not show partition %d %v to shard %d", at, p, want, mv.m.To)
	}
	mv.report("copy")
	first := true
	_, err = view.PartitionChunks(mv.src.Shard(), keysPartition(p), t.N, mv.cfg.ChunkBytes, func(ks, vs [][]byte) error {
		n := 0
		for i := range ks {
			n += len(ks[i]) + len(vs[i])
		}
		if err := mv.wait(ctx, n); err != nil {
			return err
		}
		if _, err := mv.proposeDst(ctx, &commandpb.Command{Body: &commandpb.Command_Ingest{Ingest: &commandpb.Ingest{Partition: p, Attempt: attempt, Keys: ks, Values: vs}}}); err != nil {
			return err
		}
		mv.prog.BytesCopied += int64(n)
		mv.report("copy")
		if first {
			first = false
			return mv.failpoint(ctx, "copy")
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	_, err = mv.proposeDst(ctx, &commandpb.Command{Body: &commandpb.Command_Ingest{Ingest: &commandpb.Ingest{Partition: p, Attempt: attempt, Last: true, Through: at}}})
	mv.prog.Replayed = at
	return attempt, at, err
}

// replay sends the target the source's commands lo..hi that touch the
// partition, in batches of about ChunkBytes, each ending in a watermark.
func (mv *mover) replay(ctx context.Context, attempt, lo, hi uint64) error {
	p, n := mv.m.Partition, mv.src.Table().N
	mv.report("replay")
	batch := &commandpb.Replay{Partition: p, Attempt: attempt, SrcOrigin: mv.src.Origin()}
	size := 0
	flush := func(through uint64) error {
		batch.Entries = append(batch.Entries, &commandpb.Replayed{SrcIndex: through})
		if err := mv.wait(ctx, size); err != nil {
			return err
		}
		if _, err := mv.proposeDst(ctx, &commandpb.Command{Body: &commandpb.Command_Replay{Replay: batch}}); err != nil {
			return err
		}
		mv.prog.Replayed = through
		mv.report("replay")
		batch, size = &commandpb.Replay{Partition: p, Attempt: attempt, SrcOrigin: mv.src.Origin()}, 0
		return nil
	}
	err := mv.src.CommandsIn(lo, hi, func(i uint64, cmd *commandpb.Command) error {
		if cmd != nil && storage.Touches(cmd, p, n) {
			batch.Entries = append(batch.Entries, &commandpb.Replayed{SrcIndex: i, Command: cmd})
			size += proto.Size(cmd)
		}
		if size >= mv.cfg.ChunkBytes {
			return flush(i)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush(hi)
}

func (mv *mover) wait(ctx context.Context, n int) error {
	if mv.lim == nil || n == 0 {
		return ctx.Err()
	}
	return mv.lim.WaitN(ctx, min(n, mv.lim.Burst()))
}

func (mv *mover) report(phase string) {
	mv.prog.Phase, mv.prog.Applied = phase, mv.src.AppliedIndex()
	if mv.cfg.Progress != nil {
		mv.cfg.Progress(mv.prog)
	}
}

func (mv *mover) proposeSrc(ctx context.Context, cmd *commandpb.Command) error {
	res, err := mv.src.Propose(ctx, cmd, storage.Sync)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		return fmt.Errorf("migrate: shard %d: %w", mv.m.From, err)
	}
	return nil
}

func (mv *mover) proposeDst(ctx context.Context, cmd *commandpb.Command) (storage.Result, error) {
	res, err := mv.dst.Propose(ctx, cmd)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		return res, fmt.Errorf("migrate: shard %d: %w", mv.m.To, err)
	}
	return res, nil
}

func dropCmd(p uint32) *commandpb.Command {
	return &commandpb.Command{Body: &commandpb.Command_DropPartition{DropPartition: &commandpb.DropPartition{Partition: p}}}
}

func keysPartition(p uint32) keys.PartitionID { return keys.PartitionID(p) }
