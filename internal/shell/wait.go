package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin"
)

// waitSeconds is how long each plan wait call asks the admin to wait;
// progressSeconds, when -wait draws a progress line on a terminal.
const (
	waitSeconds     = "30"
	progressSeconds = "1"
)

// progressOf picks a running plan's progress out of its text (show plan's
// form): the Moves line, else the running task's progress.
func progressOf(text string) string {
	var task string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(l, "Moves:"); ok {
			return "moves: " + strings.TrimSpace(rest)
		}
		if rest, ok := strings.CutPrefix(l, "progress:"); ok && task == "" {
			task = strings.TrimSpace(rest)
		}
	}
	return task
}

// progressLine rewrites the progress line in place ("": clears it).
func (s *Shell) progressLine(line string) {
	if s.Progress == nil {
		return
	}
	fmt.Fprintf(s.Progress, "\r\033[K%s", line)
}

// terminalStates are the plan states -wait stops at.
var terminalStates = map[string]bool{
	"SUCCEEDED": true, "ERROR": true, "INTERRUPTED": true, "CANCELED": true,
}

// planInfo is what -wait reads from a plan reply's JSON.
type planInfo struct {
	id    string // "plan_id", or else "id"
	state string
	// nothing is "nothing_to_do": the command had nothing to change and
	// created no plan (plan deploy-topology of the deployed layout).
	nothing bool
}

// readPlan reads the plan id and state from a reply's JSON document. An
// empty document gives an empty planInfo.
func readPlan(doc []byte) (planInfo, error) {
	if len(strings.TrimSpace(string(doc))) == 0 {
		return planInfo{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		return planInfo{}, err
	}
	var p planInfo
	for _, key := range []string{"plan_id", "id"} {
		if raw, ok := m[key]; ok {
			var n json.Number
			var s string
			switch {
			case json.Unmarshal(raw, &n) == nil:
				p.id = n.String()
			case json.Unmarshal(raw, &s) == nil:
				p.id = s
			}
			if p.id != "" {
				break
			}
		}
	}
	if raw, ok := m["state"]; ok {
		_ = json.Unmarshal(raw, &p.state)
	}
	if raw, ok := m["nothing_to_do"]; ok {
		_ = json.Unmarshal(raw, &p.nothing)
	}
	return p, nil
}

// retryable reports whether a plan wait call failed only because no admin
// could answer for now (the Client has already tried every address).
func retryable(err error) bool {
	switch grpcstatus.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return errors.Is(err, admin.ErrUnreachable)
}

// waitPlan follows the plan that reply (to c with -wait) created or
// resumed until it ends, prints its final state, and fails unless it
// SUCCEEDED.
func (s *Shell) waitPlan(ctx context.Context, c admin.Command, args map[string]string, reply *cairnpb.AdminReply) status {
	p, err := readPlan(reply.GetJson())
	if err != nil {
		return status{code: ExitFailed, msg: fmt.Sprintf("%s: cannot read the admin's reply to wait for the plan: %v", c.Name, err)}
	}
	if p.id == "" {
		p.id = args["id"] // plan execute -id N
	}
	if p.id == "" && p.nothing {
		if s.JSON {
			s.print(reply) // the text went out before waitPlan
		}
		return status{}
	}
	if _, err := strconv.ParseUint(p.id, 10, 63); err != nil {
		return status{code: ExitFailed, msg: fmt.Sprintf("%s: the admin's reply names no plan_id to wait for; see show plans", c.Name)}
	}
	final := reply
	if !terminalStates[p.state] {
		var st status
		final, p.state, st = s.follow(ctx, p.id)
		if st.code != ExitOK {
			return st
		}
	}
	s.print(final)
	if p.state != "SUCCEEDED" {
		return status{code: ExitFailed, msg: fmt.Sprintf("plan %s ended %s; see show plan -id %s", p.id, p.state, p.id), shown: s.JSON}
	}
	return status{}
}

// follow calls plan wait until the plan is in a terminal state or
// WaitTimeout passes, and returns the last reply and state. It asks
// through a follower: when the node it follows stops answering, it says
// so and goes on through another admin, and when no admin has answered
// for FailoverTimeout it gives up with ExitUnreachable.
func (s *Shell) follow(ctx context.Context, id string) (*cairnpb.AdminReply, string, status) {
	timeout, every := s.WaitTimeout, s.RetryEvery
	if timeout <= 0 {
		timeout = DefaultWaitTimeout
	}
	if every <= 0 {
		every = DefaultRetryEvery
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	seconds := waitSeconds
	if s.Progress != nil {
		seconds = progressSeconds // come back often, to redraw the line
		defer s.progressLine("")
	}
	stopped := status{code: ExitFailed, msg: fmt.Sprintf("stopped waiting for plan %s, which goes on; see show plan -id %s", id, id)}
	f := s.newFollower(wctx, id)
	for {
		start := time.Now()
		r, err := f.call(wctx, seconds)
		switch {
		case err == nil:
			p, perr := readPlan(r.GetJson())
			if perr != nil {
				return nil, "", status{code: ExitFailed, msg: fmt.Sprintf("plan wait -id %s: unreadable reply: %v", id, perr)}
			}
			if terminalStates[p.state] {
				return r, p.state, status{}
			}
			s.progressLine(progressOf(r.GetText()))
		case ctx.Err() != nil:
			return nil, "", stopped
		case wctx.Err() != nil:
			// WaitTimeout cut the call; reported below.
		case !retryable(err):
			st := failure(err)
			st.msg = fmt.Sprintf("waiting for plan %s: %s", id, st.msg)
			return nil, "", st
		case f.overdue():
			return nil, "", f.gaveUp()
		}
		f.pause(wctx, every, start)
		if wctx.Err() != nil {
			if ctx.Err() != nil {
				return nil, "", stopped
			}
			st := status{code: ExitFailed, msg: fmt.Sprintf("plan %s has not ended after %v; see show plan -id %s", id, timeout, id)}
			if f.lastErr != nil {
				st = failure(f.lastErr)
				st.msg = fmt.Sprintf("waiting for plan %s for %v: %s", id, timeout, st.msg)
			}
			return nil, "", st
		}
	}
}
