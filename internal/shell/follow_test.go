package shell

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin"
)

// nodeCall is one request a fakeNodes node received.
type nodeCall struct {
	addr, command string
	args          map[string]string
}

// fakeNodes is a NodeCaller over a store whose admins are at admins (show
// admins names them all). The plan command goes to the first of addrs and
// starts plan 7; plan wait is answered by answer(addr, n), n counting the
// plan waits of all nodes from 1.
type fakeNodes struct {
	addrs, admins []string
	dead          map[string]bool // nodes that answer nothing
	answer        func(addr string, n int) (*cairnpb.AdminReply, error)
	calls         []nodeCall
	waits         int
}

func (f *fakeNodes) Addrs() []string { return f.addrs }

func (f *fakeNodes) Call(ctx context.Context, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	return f.CallAt(ctx, f.addrs[0], command, args)
}

func (f *fakeNodes) CallAt(_ context.Context, addr, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	f.calls = append(f.calls, nodeCall{addr, command, maps.Clone(args)})
	if f.dead[addr] {
		return nil, down(addr)
	}
	switch command {
	case "show admins":
		var docs []string
		for i, a := range f.admins {
			docs = append(docs, fmt.Sprintf(`{"sn": %d, "addr": %q}`, i+1, a))
		}
		return &cairnpb.AdminReply{Json: []byte("[" + strings.Join(docs, ",") + "]")}, nil
	case "plan wait":
		f.waits++
		return f.answer(addr, f.waits)
	}
	return &cairnpb.AdminReply{Text: "Started plan 7", Json: []byte(`{"plan_id": 7, "state": "RUNNING"}`)}, nil
}

// sent lists "addr command" of each call after the first (the plan).
func (f *fakeNodes) sent() []string {
	var out []string
	for _, c := range f.calls[1:] {
		out = append(out, c.addr+" "+c.command)
	}
	return out
}

func planState(st string) *cairnpb.AdminReply {
	return &cairnpb.AdminReply{Text: "Plan 7 " + st, Json: fmt.Appendf(nil, `{"id": 7, "state": %q}`, st)}
}

func down(addr string) error {
	return fmt.Errorf("%w: tried %s (connection refused)", admin.ErrUnreachable, addr)
}

func nodeShell(f *fakeNodes) (*Shell, *bytes.Buffer, *bytes.Buffer) {
	var out, errw bytes.Buffer
	return &Shell{Caller: f, Out: &out, Err: &errw, RetryEvery: time.Millisecond}, &out, &errw
}

var deployWait = []string{"plan", "deploy-topology", "-name", "t1", "-wait"}

// TestFollowThroughAnotherAdmin: the node -wait follows goes away (it is
// killed, or loses the admin leadership and cannot reach the new leader);
// the shell says so once and follows the plan to its end through another
// admin, asking plan wait only: the plan is not sent again.
func TestFollowThroughAnotherAdmin(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		why  string
	}{
		{"killed", down("a:1"), "(it does not answer)"},
		{"lost leadership", grpcstatus.Error(codes.Unavailable, "admin: this admin lost the leadership while waiting; retry"),
			"(admin: this admin lost the leadership while waiting; retry)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeNodes{addrs: []string{"a:1"}, admins: []string{"a:1", "b:2", "c:3"}}
			f.answer = func(addr string, n int) (*cairnpb.AdminReply, error) {
				switch {
				case n == 1:
					return planState("RUNNING"), nil
				case addr == "a:1":
					return nil, tc.err
				case addr == "b:2" || n < 7: // the first round finds no admin to serve
					return nil, grpcstatus.Error(codes.Unavailable, "admin: no admin leader is elected yet; retry")
				case n == 7:
					return planState("RUNNING"), nil
				}
				return planState("SUCCEEDED"), nil
			}
			sh, out, errw := nodeShell(f)
			if code := sh.RunCommand(context.Background(), deployWait); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errw)
			}
			want := []string{"a:1 show admins", "a:1 plan wait", "a:1 plan wait", "b:2 plan wait", "c:3 plan wait", "a:1 plan wait",
				"b:2 plan wait", "c:3 plan wait", "c:3 plan wait"}
			if got := f.sent(); !slices.Equal(got, want) {
				t.Errorf("sent %q\nwant %q", got, want)
			}
			for _, c := range f.calls[2:] {
				if c.args["id"] != "7" {
					t.Errorf("sent %v, want plan wait -id 7", c)
				}
			}
			if got := f.calls[8].args["seconds"]; got != progressSeconds {
				t.Errorf("a node asked while lost waits %s s, want %s", got, progressSeconds)
			}
			if got := f.calls[9].args["seconds"]; got != waitSeconds {
				t.Errorf("the new node followed waits %s s, want %s", got, waitSeconds)
			}
			if want := "Started plan 7\nPlan 7 SUCCEEDED\n"; out.String() != want {
				t.Errorf("stdout %q, want %q", out, want)
			}
			if want := "Warning: lost the admin at a:1 " + tc.why + "; following plan 7 through another admin\n"; errw.String() != want {
				t.Errorf("stderr %q, want %q", errw, want)
			}
		})
	}
}

// TestFollowNoAdminAnswers: no admin answers within FailoverTimeout: exit
// 3 with a message naming the plan and how to follow it later.
func TestFollowNoAdminAnswers(t *testing.T) {
	f := &fakeNodes{addrs: []string{"a:1", "h:9"}, admins: []string{"a:1", "b:2"}}
	f.answer = func(addr string, n int) (*cairnpb.AdminReply, error) {
		if n == 1 {
			return planState("RUNNING"), nil
		}
		return nil, down(addr)
	}
	sh, out, errw := nodeShell(f)
	sh.FailoverTimeout = 50 * time.Millisecond
	start := time.Now()
	code := sh.RunCommand(context.Background(), deployWait)
	if took := time.Since(start); code != ExitUnreachable || took > 5*time.Second {
		t.Fatalf("exit %d after %v, want 3 soon after 50ms: %s", code, took, errw)
	}
	for _, want := range []string{
		"Warning: lost the admin at a:1 (it does not answer); following plan 7 through another admin\n",
		"Error: no admin answered for 50ms while following plan 7 (asked a:1, h:9, b:2; last: admin: no storage node answered: tried ",
		"the plan goes on without this shell: follow it with plan wait -id 7, or show plan -id 7\n",
	} {
		if !strings.Contains(errw.String(), want) {
			t.Errorf("stderr %q lacks %q", errw, want)
		}
	}
	if strings.Count(errw.String(), "Warning:") != 1 {
		t.Errorf("stderr %q: want the loss said once", errw)
	}
	if out.String() != "Started plan 7\n" {
		t.Errorf("stdout %q", out)
	}
	for _, c := range f.calls[1:] {
		if c.command != "plan wait" && c.command != "show admins" {
			t.Errorf("sent %s to %s: only plan wait (and show admins) may follow the plan", c.command, c.addr)
		}
	}
}

// TestFollowFirstAnswering: the shell's first node is down when the plan
// is followed; the node that answered (a helper host) is followed, and
// nothing is said while it answers.
func TestFollowFirstAnswering(t *testing.T) {
	f := &fakeNodes{addrs: []string{"a:1", "h:9"}, admins: []string{"a:1", "h:9"}, dead: map[string]bool{"a:1": true}}
	f.answer = func(addr string, n int) (*cairnpb.AdminReply, error) {
		return planState([]string{"RUNNING", "RUNNING", "SUCCEEDED"}[min(n, 3)-1]), nil
	}
	f.calls = []nodeCall{{command: "plan deploy-topology"}} // went to h:9
	sh, _, errw := nodeShell(f)
	st := sh.waitPlan(context.Background(), admin.Command{Name: "plan deploy-topology"}, nil, planState("RUNNING"))
	if st.code != ExitOK || errw.Len() != 0 {
		t.Fatalf("status %+v, stderr %q", st, errw)
	}
	want := []string{"a:1 show admins", "h:9 show admins", "h:9 plan wait", "h:9 plan wait", "h:9 plan wait"}
	if got := f.sent(); !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
}

// TestFollowCallDeadline: a node that does not answer a plan wait within
// the seconds asked and answerGrace counts as lost; once lost, no call
// outlives the failover deadline.
func TestFollowCallDeadline(t *testing.T) {
	var deadlines []time.Time
	rec := &deadlineNodes{fakeNodes: fakeNodes{addrs: []string{"a:1"}}, deadlines: &deadlines}
	f := &follower{s: &Shell{}, id: "7", nodes: rec, addrs: []string{"a:1"}, timeout: 3 * time.Second}
	start := time.Now()
	_, _ = f.callAt(context.Background(), 0, "30")
	f.lostAt = start
	_, _ = f.callAt(context.Background(), 0, "1")
	if len(deadlines) != 2 {
		t.Fatalf("%d calls", len(deadlines))
	}
	if d := deadlines[0].Sub(start); d < 30*time.Second+answerGrace || d > 31*time.Second+answerGrace {
		t.Errorf("plan wait -seconds 30 may take %v, want 30s + %v", d, answerGrace)
	}
	if d := deadlines[1].Sub(start); d > 3*time.Second {
		t.Errorf("a call while lost may take %v, past the failover deadline (3s)", d)
	}
}

// deadlineNodes records the deadline of each call.
type deadlineNodes struct {
	fakeNodes
	deadlines *[]time.Time
}

func (d *deadlineNodes) CallAt(ctx context.Context, addr, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	dl, _ := ctx.Deadline()
	*d.deadlines = append(*d.deadlines, dl)
	return planState("RUNNING"), nil
}
