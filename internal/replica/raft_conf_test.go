package replica

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// setCut cuts node id off the network, or reconnects it.
func (g *testGroup) setCut(id uint64, cut bool) {
	g.net.mu.Lock()
	g.net.cut[id] = cut
	g.net.mu.Unlock()
}

// awaitVotes waits until node id has sent n more vote requests than it
// had when called: proof that it campaigned.
func (g *testGroup) awaitVotes(t *testing.T, id uint64, n int) {
	t.Helper()
	start := g.net.voteRequests(id)
	deadline := time.Now().Add(10 * time.Second)
	for g.net.voteRequests(id) < start+n {
		if time.Now().After(deadline) {
			t.Fatalf("node %d sent %d vote requests in 10s, want %d", id, g.net.voteRequests(id)-start, n)
		}
		<-time.After(5 * time.Millisecond) // polling a condition with a deadline
	}
}

// TestRaftRemovedReplicaCannotWin removes a replica while it is cut off
// (plan remove-admin on a node that is down), so it never learns of its
// removal, then brings it back with its old configuration. It campaigns,
// but wins no vote: not while the group has a leader, and not when the
// leader is gone, since its log lacks the removal; the group keeps its
// term and leader, and elects among its members again.
func TestRaftRemovedReplicaCannotWin(t *testing.T) {
	g := newGroup(t, 0)
	l := g.leader()
	lid, _ := l.Leader()
	victim, other := uint64(1), uint64(2)
	for victim == lid || other == lid || victim == other {
		victim, other = victim%3+1, other%3+1
	}
	g.setCut(victim, true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.RemoveVoter(ctx, victim); err != nil {
		t.Fatalf("remove node %d: %v", victim, err)
	}
	if err := l.RemoveVoter(ctx, victim); err != nil {
		t.Fatalf("removing node %d again: %v, want nil (idempotent)", victim, err)
	}
	for i := range 5 {
		if _, err := g.write(l, fmt.Sprintf("/r/-/%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	_, term := l.Leader()

	// The removed replica restarts with the configuration it last knew.
	g.stop(victim)
	g.start(victim)
	g.setCut(victim, false)
	v := g.net.get(victim)
	g.awaitVotes(t, victim, 6)
	if lead, tm := l.Leader(); lead != lid || tm != term || v.IsLeader() {
		t.Fatalf("after the removed node %d campaigned: leader %d term %d (was %d, %d)", victim, lead, tm, lid, term)
	}

	// Without a leader, the remaining member still refuses it its vote.
	g.stop(lid)
	g.awaitVotes(t, victim, 6)
	o := g.net.get(other)
	if lead, _ := o.Leader(); lead == victim || v.IsLeader() {
		t.Fatalf("the removed node %d won an election", victim)
	}
	g.start(lid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, _ := g.net.get(lid).Leader()
		if b, _ := o.Leader(); a != 0 && a != victim && a == b {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the two members elected no leader within 10s")
		}
		<-time.After(5 * time.Millisecond) // polling a condition with a deadline
	}
	if v.IsLeader() {
		t.Fatalf("the removed node %d leads", victim)
	}
}

// TestRaftLearnerJoins adds a fourth replica the way plan deploy-topology
// does: it starts empty and uninitialized, the leader adds it as a
// learner, it catches up through a snapshot and serves no read of any
// consistency until it is promoted; then it votes and serves, and can lead.
func TestRaftLearnerJoins(t *testing.T) {
	g := newGroup(t, 0)
	l := g.leader()
	for i := range 20 {
		if _, err := g.write(l, fmt.Sprintf("/j/-/%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	g.dirs[4] = t.TempDir()
	g.startWith(4, true)
	n := g.net.get(4)
	n.Admit()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.ReadReady(ctx, Consistency{Kind: NoneRequired}); !errors.Is(err, ErrRejoining) {
		t.Fatalf("an empty joining replica's NONE_REQUIRED read: %v, want ErrRejoining", err)
	}
	if err := l.AddLearner(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := l.AddLearner(ctx, 4); err != nil {
		t.Fatalf("adding the learner again: %v, want nil (idempotent)", err)
	}
	target := l.AppliedIndex()
	deadline := time.Now().Add(10 * time.Second)
	for n.AppliedIndex() < target {
		if time.Now().After(deadline) {
			t.Fatalf("the learner applied %d of %d in 10s", n.AppliedIndex(), target)
		}
		<-time.After(5 * time.Millisecond) // polling a condition with a deadline
	}
	if !slices.Contains(n.Learners(), 4) || n.Votes() {
		t.Fatalf("caught up, node 4 sees learners %v voters %v; want itself a learner", n.Learners(), n.Voters())
	}
	for _, c := range []Consistency{{Kind: NoneRequired}, {Kind: TimeLag, Lag: time.Hour}, {Kind: Absolute}} {
		if err := n.ReadReady(ctx, c); !errors.Is(err, ErrNotVoter) {
			t.Fatalf("a learner's read (kind %v): %v, want ErrNotVoter", c.Kind, err)
		}
	}
	if err := l.AddVoter(ctx, 4); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for !n.Votes() {
		if time.Now().After(deadline) {
			t.Fatalf("node 4 does not see itself voting: voters %v", n.Voters())
		}
		<-time.After(5 * time.Millisecond) // polling a condition with a deadline
	}
	if err := n.ReadReady(ctx, Consistency{Kind: NoneRequired}); err != nil {
		t.Fatalf("the promoted replica's read: %v", err)
	}
	l.TransferLeadership(4)
	deadline = time.Now().Add(10 * time.Second)
	for !n.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("the promoted replica did not take the leadership within 10s")
		}
		<-time.After(5 * time.Millisecond) // polling a condition with a deadline
	}
	if _, err := g.write(n, "/j/-/last", "v"); err != nil {
		t.Fatalf("a write on the new leader: %v", err)
	}
}

// TestRaftTransferSkipsDownVoter asks a leader to hand its leadership to a
// voter that is down: it must go to the live voter instead (the admin's
// leave-replica names the candidate's preferred leader, which may be the
// node that just failed), and a learner is never chosen.
func TestRaftTransferSkipsDownVoter(t *testing.T) {
	g := newGroup(t, 0)
	l := g.leader()
	if _, err := g.write(l, "/t/-/0", "v"); err != nil {
		t.Fatal(err)
	}
	down := follower(l)
	g.stop(down)
	var live uint64
	for _, id := range l.Voters() {
		if id != down && id != l.cfg.Node {
			live = id
		}
	}
	// The leader hears nothing from down for an election timeout, so
	// CheckQuorum marks it inactive; until then it may still be chosen.
	deadline := time.Now().Add(10 * time.Second)
	for l.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatalf("node %d still leads 10s after being asked to hand off to the stopped node %d", l.cfg.Node, down)
		}
		l.TransferLeadership(down)
		<-time.After(50 * time.Millisecond) // polling a condition with a deadline
	}
	n := g.net.get(live)
	deadline = time.Now().Add(10 * time.Second)
	for !n.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatalf("the live voter %d did not take over (the stopped node was %d)", live, down)
		}
		<-time.After(5 * time.Millisecond) // polling a condition with a deadline
	}
	if _, err := g.write(n, "/t/-/1", "v"); err != nil {
		t.Fatalf("a write on the new leader: %v", err)
	}
}
