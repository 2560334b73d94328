package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin"
)

// answerGrace is how much longer than the seconds it asked for a plan
// wait call may take before the node it went to counts as not answering:
// a node that does not lead forwards the call, after waiting up to 15 s
// for a leader to be elected (admin.Service.Command).
const answerGrace = 20 * time.Second

// learnTimeout bounds the show admins call that learns the other admins.
const learnTimeout = 10 * time.Second

// follower sends plan wait for one plan to one node at a time: the node
// it follows. When that node stops answering (it cannot be reached, does
// not answer in time, or answers that it cannot serve for now: it lost
// the admin leadership), the follower says so once on the Shell's Err and
// asks the other nodes it knows in turn, once each per round, and follows
// the first that answers. It knows the Caller's addresses and the admins
// that show admins named when it started. It only ever asks plan wait:
// the plan is never sent again. Used by follow, on the Shell's goroutine.
type follower struct {
	s       *Shell
	id      string        // the plan's id
	nodes   NodeCaller    // nil: a plain Caller, asked as one node (addrs is [""])
	addrs   []string      // the nodes to ask, in order
	cur     int           // the node followed: an index in addrs
	timeout time.Duration // Shell.FailoverTimeout
	// lostAt is when the node followed stopped answering; zero while it
	// answers.
	lostAt  time.Time
	lastErr error // the last call's error, nil after an answer
}

// newFollower returns a follower of plan id. Through a NodeCaller it
// first learns the admins (learn).
func (s *Shell) newFollower(ctx context.Context, id string) *follower {
	f := &follower{s: s, id: id, addrs: []string{""}, timeout: s.FailoverTimeout}
	if f.timeout <= 0 {
		f.timeout = DefaultFailoverTimeout
	}
	if nc, ok := s.Caller.(NodeCaller); ok && len(nc.Addrs()) > 0 {
		f.nodes, f.addrs = nc, nc.Addrs()
		f.learn(ctx)
	}
	return f
}

// learn asks the Caller's nodes in order for show admins until one
// answers, follows that node (the one that took the plan command, unless
// it has just gone), and adds the admins it names to the nodes to ask. A
// failure leaves the follower with the Caller's nodes only.
func (f *follower) learn(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, learnTimeout)
	defer cancel()
	for k := range f.addrs {
		r, err := f.nodes.CallAt(lctx, f.addrs[k], "show admins", nil)
		if errors.Is(err, admin.ErrUnreachable) {
			continue
		}
		if err != nil {
			return
		}
		f.cur = k
		var admins []struct {
			Addr string `json:"addr"`
		}
		if json.Unmarshal(r.GetJson(), &admins) != nil {
			return
		}
		for _, a := range admins {
			if a.Addr != "" && !slices.Contains(f.addrs, a.Addr) {
				f.addrs = append(f.addrs, a.Addr)
			}
		}
		return
	}
}

// call asks the node followed for the plan, waiting up to seconds. When it
// does not answer, call asks the next node, until one answers or each was
// asked once (a round), and returns the last error. While the follower is
// lost each node is asked to wait one second only, so that a round ends
// soon; past the failover deadline, call asks no one.
func (f *follower) call(ctx context.Context, seconds string) (*cairnpb.AdminReply, error) {
	for range f.addrs {
		if f.overdue() {
			break
		}
		secs := seconds
		if f.lost() {
			secs = progressSeconds
		}
		k := f.cur
		r, err := f.callAt(ctx, k, secs)
		if err == nil {
			f.lostAt, f.lastErr = time.Time{}, nil
			return r, nil
		}
		if ctx.Err() != nil {
			return nil, err // follow's own deadline or cancel, not the node's
		}
		f.lastErr = err
		if !retryable(err) {
			return nil, err
		}
		f.lose(k, err)
		f.cur = (k + 1) % len(f.addrs)
	}
	return nil, f.lastErr
}

// callAt sends plan wait to node k, giving it the seconds asked plus
// answerGrace to answer, and no later than the failover deadline once lost.
func (f *follower) callAt(ctx context.Context, k int, seconds string) (*cairnpb.AdminReply, error) {
	n, _ := strconv.Atoi(seconds)
	deadline := time.Now().Add(time.Duration(n)*time.Second + answerGrace)
	if f.lost() && f.deadline().Before(deadline) {
		deadline = f.deadline()
	}
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	args := map[string]string{"id": f.id, "seconds": seconds}
	if f.nodes == nil {
		return f.s.Caller.Call(cctx, "plan wait", args)
	}
	return f.nodes.CallAt(cctx, f.addrs[k], "plan wait", args)
}

// pause waits between rounds that failed or came back at once: until
// every has passed since start, no later than the failover deadline once
// lost, or until ctx ends.
func (f *follower) pause(ctx context.Context, every time.Duration, start time.Time) {
	d := every - time.Since(start)
	if f.lost() {
		d = min(d, time.Until(f.deadline()))
	}
	if d <= 0 || ctx.Err() != nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// lose records that node k did not answer with err. The first time since
// the last answer, it is the node followed: say so on Err, once.
func (f *follower) lose(k int, err error) {
	if f.lost() {
		return
	}
	f.lostAt = time.Now()
	f.s.progressLine("")
	at := "the admin"
	if f.addrs[k] != "" {
		at += " at " + f.addrs[k]
	}
	next := "through another admin"
	if len(f.addrs) == 1 {
		next = fmt.Sprintf("by asking again for up to %v", f.timeout)
	}
	fmt.Fprintf(f.s.Err, "Warning: lost %s (%s); following plan %s %s\n", at, lostReason(err), f.id, next)
}

// lostReason words why a node did not answer plan wait, briefly.
func lostReason(err error) string {
	switch {
	case errors.Is(err, admin.ErrUnreachable):
		return "it does not answer"
	case grpcstatus.Code(err) == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		return "it did not answer in time"
	}
	return admin.Message(err)
}

// lost reports whether the node followed has stopped answering.
func (f *follower) lost() bool { return !f.lostAt.IsZero() }

// deadline is when a lost follower gives up: FailoverTimeout after the
// loss.
func (f *follower) deadline() time.Time { return f.lostAt.Add(f.timeout) }

// overdue reports whether a lost follower is past its deadline.
func (f *follower) overdue() bool { return f.lost() && !time.Now().Before(f.deadline()) }

// gaveUp is the status of a follower that no admin answered in time
// (ExitUnreachable): it names the plan, which goes on, and how to follow
// it later.
func (f *follower) gaveUp() status {
	asked := ""
	if f.nodes != nil {
		asked = "asked " + strings.Join(f.addrs, ", ") + "; "
	}
	last := "no answer"
	if f.lastErr != nil {
		last = admin.Message(f.lastErr)
	}
	return status{code: ExitUnreachable, msg: fmt.Sprintf(
		"no admin answered for %v while following plan %s (%slast: %s); the plan goes on without this shell: follow it with plan wait -id %s, or show plan -id %s",
		f.timeout, f.id, asked, last, f.id, f.id)}
}
