package replica

import (
	"context"
	"fmt"
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
