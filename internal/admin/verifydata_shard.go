package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// shardCheck is one run of a verify-shard task (see verifydata.go).
type shardCheck struct {
	s      *Service
	m      *Meta
	p      *Plan
	i      int // the task's index
	sh     topology.Shard
	shard  uint64
	rate   int64
	repair bool
	last   time.Time // when progress was last written
}

const (
	checksumRounds = 3                // tries when a replica misses a checksum's entry
	giveUpAfter    = 30 * time.Second // a node failing this long is reported, not waited for
	catchUpWait    = 10 * time.Minute // bound on a rebuilt replica's catching up
)

func (s *Service) taskVerifyShard(ctx context.Context, p *Plan, t *Task) error {
	m, _, err := s.store.load(ctx)
	if err != nil {
		return err
	}
	shard := argID(t, "shard")
	sh, ok := m.Deployed.Shard(topologyShard(shard))
	if !ok {
		return permanent("shard %s is not in the deployed topology", rgName(shard))
	}
	rate, _ := strconv.ParseInt(t.Args["rate"], 10, 64)
	c := &shardCheck{s: s, m: m, p: p, i: slices.Index(p.Tasks, t), sh: sh, shard: shard, rate: rate, repair: t.Args["repair"] == "true"}
	lines, problem, err := c.run(ctx)
	if err != nil {
		return err
	}
	return stopUnlessInterrupted(s.noteTask(ctx, p.ID, c.i, func(t *Task) {
		t.Result, t.Progress, t.Problem = lines, "", problem
	}))
}

func (c *shardCheck) replicas() []uint64 {
	out := make([]uint64, len(c.sh.Replicas))
	for i, r := range c.sh.Replicas {
		out[i] = uint64(r)
	}
	return out
}

// run checksums the shard, repairs the replicas that differ (if asked and
// safe), checks again, and returns its sentences and whether anything is
// left unrepaired.
func (c *shardCheck) run(ctx context.Context) ([]string, bool, error) {
	index, cmp, err := c.round(ctx)
	if err != nil {
		return nil, false, err
	}
	if cmp.clean() {
		return []string{agreeText(c.shard, cmp.Partitions, c.replicas(), index)}, false, nil
	}
	lines := slices.Concat(cmp.Failed, cmp.NoMajority)
	problem := len(lines) > 0
	var rebuilt []uint64
	for _, sn := range cmp.divergentNodes() {
		text := cmp.differText(c.shard, sn)
		why, ok := c.mayRebuild(ctx, sn, cmp)
		if ok {
			if err := c.rebuild(ctx, sn); err != nil {
				return nil, false, err
			}
			rebuilt = append(rebuilt, sn)
		} else {
			text[len(text)-1] += ": not repaired: " + why
			problem = true
		}
		lines = append(lines, text...)
	}
	if len(rebuilt) == 0 {
		return lines, problem, nil
	}
	index, after, err := c.round(ctx)
	if err != nil {
		return nil, false, err
	}
	return c.confirm(lines, rebuilt, index, after), problem || !after.clean(), nil
}

// mayRebuild says whether sn's replica may be rebuilt, and if not why.
func (c *shardCheck) mayRebuild(ctx context.Context, sn uint64, cmp comparison) (string, bool) {
	switch {
	case !c.repair:
		return "-no-repair was given", false
	case len(cmp.NoMajority) > 0:
		return "some partitions have no majority, so nothing is repaired", false
	case len(cmp.divergentNodes()) > 1:
		// A rebuild copies the leader's data, and with two replicas that
		// differ (each on its own partitions) the leader may be one of them.
		return "more than one replica differs from the majority, so no copy can be trusted to rebuild from; nothing is repaired", false
	}
	if err := checkMajority(c.m, c.sh, sn, c.s.describeAll(ctx, c.m), c.p.ID); err != nil {
		return "rebuilding it " + strings.TrimPrefix(status.Convert(err).Message(), "stopping "+serviceName(c.shard, sn)+" "), false
	}
	return "", true
}

// confirm appends to each rebuilt node's last sentence what the second
// checksum found.
func (c *shardCheck) confirm(lines []string, rebuilt []uint64, index uint64, after comparison) []string {
	for _, sn := range rebuilt {
		outcome := fmt.Sprintf(": %s's replica rebuilt from its peers; agrees now at index %d", snName(sn), index)
		if slices.Contains(after.divergentNodes(), sn) {
			outcome = fmt.Sprintf(": %s's replica rebuilt from its peers, but still differs at index %d", snName(sn), index)
		}
		last := -1
		for j, l := range lines {
			if strings.Contains(l, " differs on "+snName(sn)+" (") || strings.Contains(l, " differ on "+snName(sn)) {
				last = j
			}
		}
		if last < 0 {
			lines = append(lines, strings.TrimPrefix(outcome, ": "))
			continue
		}
		lines[last] += outcome
	}
	if !after.clean() {
		lines = append(lines, after.Failed...)
		lines = append(lines, after.NoMajority...)
		for _, sn := range after.divergentNodes() {
			if !slices.Contains(rebuilt, sn) {
				lines = append(lines, after.differText(c.shard, sn)...)
			}
		}
	} else {
		lines = append(lines, agreeText(c.shard, after.Partitions, c.replicas(), index))
	}
	return lines
}

// progress writes the task's progress, at most every progressEvery.
func (c *shardCheck) progress(ctx context.Context, text string) {
	if time.Since(c.last) < progressEvery {
		return
	}
	c.last = time.Now()
	_ = c.s.noteTask(ctx, c.p.ID, c.i, func(t *Task) { t.Progress = text })
}

// round has the shard's replicas checksum at one index and compares them.
// A replica that missed the entry (it restarted since, or caught up past
// it through a Raft snapshot) makes it try again with a new id, up to
// checksumRounds times; then it is reported as not checked.
func (c *shardCheck) round(ctx context.Context) (uint64, comparison, error) {
	for try := 1; ; try++ {
		id, err := c.s.nextCheckID(ctx, c.p, c.i)
		if err != nil {
			return 0, comparison{}, stopUnlessInterrupted(err)
		}
		index, err := c.propose(ctx, id)
		if err != nil {
			return 0, comparison{}, err
		}
		got, missed := c.collect(ctx, id, index)
		if ctx.Err() != nil {
			return 0, comparison{}, ctx.Err()
		}
		if len(missed) == 0 || try == checksumRounds {
			for _, sn := range missed {
				got = append(got, replicaSums{SN: sn, Err: fmt.Sprintf("it did not apply checksum after %d tries (it restarted, or caught up past it through a snapshot)", try)})
			}
			return index, compareSums(c.shard, c.replicas(), got), nil
		}
	}
}

// propose has the shard's leader propose checksum id, and returns the
// index it was applied at.
func (c *shardCheck) propose(ctx context.Context, id uint64) (uint64, error) {
	deadline := time.Now().Add(2 * time.Minute)
	var lastErr error
	for time.Now().Before(deadline) {
		lead, _ := c.s.shardLeader(ctx, c.m, c.sh)
		if sn := c.m.sn(lead); sn != nil {
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			r, err := c.s.control(sn.Addr()).ShardChecksum(rctx, &controlpb.ShardChecksumRequest{
				Store: c.m.Store, Shard: c.shard, Id: id, BytesPerSec: c.rate})
			cancel()
			if err == nil && r.GetProposed() {
				return r.GetIndex(), nil
			}
			lastErr = err
		} else {
			lastErr = errors.New("no replica leads it")
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("%s: the checksum could not be proposed: %v", rgName(c.shard), lastErr)
}

// replicaPoll is what collect knows of one replica.
type replicaPoll struct {
	failing time.Time // when its node began failing, or zero
	applied uint64
	moved   time.Time // when applied last grew
	note    string
}

// collect fetches every replica's result for checksum id at index until
// each is done, missed the entry, or cannot be had.
func (c *shardCheck) collect(ctx context.Context, id, index uint64) ([]replicaSums, []uint64) {
	var got []replicaSums
	var missed []uint64
	polls := map[uint64]*replicaPoll{}
	pending := c.replicas()
	for len(pending) > 0 && ctx.Err() == nil {
		keep := pending[:0]
		for _, sn := range pending {
			pr := polls[sn]
			if pr == nil {
				pr = &replicaPoll{moved: time.Now()}
				polls[sn] = pr
			}
			res, miss, done := c.poll(ctx, sn, id, index, pr)
			switch {
			case miss:
				missed = append(missed, sn)
			case done:
				got = append(got, res)
			default:
				keep = append(keep, sn)
			}
		}
		pending = keep
		c.progress(ctx, c.progressText(index, polls))
		if len(pending) > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	return got, missed
}

// poll asks one replica once: done with a result (sums, or an Err that
// says why there are none), missed (it will never have one), or neither.
func (c *shardCheck) poll(ctx context.Context, sn, id, index uint64, pr *replicaPoll) (res replicaSums, missed, done bool) {
	res.SN = sn
	node := c.m.sn(sn)
	if node == nil {
		res.Err = "its node is not deployed"
		return res, false, true
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	r, err := c.s.control(node.Addr()).ChecksumResult(rctx, &controlpb.ChecksumResultRequest{Store: c.m.Store, Shard: c.shard, Id: id})
	cancel()
	if err != nil {
		if pr.failing.IsZero() {
			pr.failing = time.Now()
		}
		pr.note = snName(sn) + " does not answer"
		if status.Code(err) == codes.FailedPrecondition || time.Since(pr.failing) > giveUpAfter {
			res.Err = taskError(err)
			return res, false, true
		}
		return res, false, false
	}
	pr.failing = time.Time{}
	if r.GetApplied() > pr.applied {
		pr.applied, pr.moved = r.GetApplied(), time.Now()
	}
	switch {
	case r.GetKnown() && r.GetIndex() != index:
		// The id was applied at another index here (proposed again after a
		// restart): its sums are of another state. Missed: a new round.
		return res, true, false
	case !r.GetKnown() && r.GetApplied() >= index:
		return res, true, false
	case !r.GetKnown() && time.Since(pr.moved) > giveUpAfter:
		res.Err = fmt.Sprintf("it is stuck at index %d, below the checksum's %d", r.GetApplied(), index)
		return res, false, true
	case !r.GetKnown():
		pr.note = fmt.Sprintf("%s applying (at %d of %d)", snName(sn), r.GetApplied(), index)
		return res, false, false
	case !r.GetDone():
		pr.note = fmt.Sprintf("%s %d of %d partitions (%s)", snName(sn), r.GetPartitionsDone(), r.GetPartitionsTotal(), mb(r.GetBytesDone()))
		return res, false, false
	case r.GetError() != "":
		res.Err = r.GetError()
		return res, false, true
	}
	res.Sums = map[uint32]partSum{}
	for _, p := range r.GetPartitions() {
		res.Sums[p.GetPartition()] = partSum{Sum: p.GetSum(), Records: p.GetRecords(), Bytes: p.GetBytes()}
	}
	pr.note = snName(sn) + " done"
	return res, false, true
}

func (c *shardCheck) progressText(index uint64, polls map[uint64]*replicaPoll) string {
	var notes []string
	for _, sn := range c.replicas() {
		if pr := polls[sn]; pr != nil && pr.note != "" {
			notes = append(notes, pr.note)
		}
	}
	return fmt.Sprintf("%s checksum at index %d: %s", rgName(c.shard), index, strings.Join(notes, ", "))
}

// rebuild has sn rebuild its replica from its peers and waits until it
// has caught up with the leader.
func (c *shardCheck) rebuild(ctx context.Context, sn uint64) error {
	node := c.m.sn(sn)
	id, err := c.s.nextCheckID(ctx, c.p, c.i)
	if err != nil {
		return stopUnlessInterrupted(err)
	}
	c.s.log.Warn("rebuilding a replica that differs from its peers", "shard", c.shard, "sn", sn)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = c.s.control(node.Addr()).RebuildReplica(rctx, &controlpb.RebuildReplicaRequest{Store: c.m.Store, Shard: c.shard, Id: id})
	cancel()
	if err != nil {
		return fmt.Errorf("rebuilding %s's replica of %s: %s", snName(sn), rgName(c.shard), taskError(err))
	}
	_, _ = c.s.store.update(ctx, func(m *Meta) error {
		m.event("plan %d: %s's replica of %s differed from its peers and is rebuilt from them", c.p.ID, snName(sn), rgName(c.shard))
		return nil
	})
	return c.awaitCaughtUp(ctx, sn, node.Addr())
}

// awaitCaughtUp waits until sn's replica is readmitted and has applied
// what the leader had applied when the wait began.
func (c *shardCheck) awaitCaughtUp(ctx context.Context, sn uint64, addr string) error {
	var target uint64
	deadline := time.Now().Add(catchUpWait)
	for time.Now().Before(deadline) {
		if target == 0 {
			if lead, infos := c.s.shardLeader(ctx, c.m, c.sh); lead != 0 && lead != sn {
				target = shardState(infos[lead], c.shard).GetApplied()
			}
		}
		st := shardState(c.s.describe(ctx, addr), c.shard)
		if target != 0 && st.GetRunning() && !st.GetRejoining() && st.GetApplied() >= target {
			return nil
		}
		c.progress(ctx, fmt.Sprintf("%s: %s's replica rebuilding (applied %d of %d, rejoining %v)", rgName(c.shard), snName(sn), st.GetApplied(), target, st.GetRejoining()))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s's replica of %s did not catch up within %v of its rebuild", snName(sn), rgName(c.shard), catchUpWait)
}
