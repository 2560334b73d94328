package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// planAdmin answers a plan command with plan 7 RUNNING and then plan wait
// with the given states in turn; an empty state answers with err.
func planAdmin(err error, states ...string) *fakeAdmin {
	return &fakeAdmin{answer: func(n int, command string, args map[string]string) (*cairnpb.AdminReply, error) {
		if command != "plan wait" {
			return &cairnpb.AdminReply{Text: "Started plan 7",
				Json: []byte(`{"plan_id": 7, "state": "RUNNING"}`)}, nil
		}
		st := states[min(n-2, len(states)-1)]
		if st == "" {
			return nil, err
		}
		return &cairnpb.AdminReply{Text: "Plan 7 " + st,
			Json: fmt.Appendf(nil, `{"id": 7, "state": %q}`, st)}, nil
	}}
}

func TestWait(t *testing.T) {
	fake := planAdmin(nil, "RUNNING", "RUNNING", "SUCCEEDED")
	sh, out, errw := newShell(fake)
	words := []string{"plan", "deploy-zone", "-name", "dc1", "-rf", "1", "-wait"}
	if code := sh.RunCommand(context.Background(), words); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errw)
	}
	if len(fake.calls) != 4 {
		t.Fatalf("sent %v, want the plan and three plan waits", fake.calls)
	}
	if a := fake.calls[0].args; a["wait"] != "true" {
		t.Errorf("plan sent with %v, want -wait passed on", a)
	}
	for _, c := range fake.calls[1:] {
		if c.command != "plan wait" || c.args["id"] != "7" || c.args["seconds"] != "30" {
			t.Errorf("sent %v, want plan wait -id 7 -seconds 30", c)
		}
	}
	if want := "Started plan 7\nPlan 7 SUCCEEDED\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
}

func TestWaitOutcomes(t *testing.T) {
	ctx := context.Background()
	deploy := []string{"plan", "deploy-topology", "-name", "t1", "-wait"}

	// A plan that fails: its final state is printed and the exit is 1.
	sh, out, errw := newShell(planAdmin(nil, "RUNNING", "ERROR"))
	if code := sh.RunCommand(ctx, deploy); code != ExitFailed {
		t.Errorf("ERROR: exit %d, want 1", code)
	}
	if !strings.HasSuffix(out.String(), "Plan 7 ERROR\n") || !strings.Contains(errw.String(), "Error: plan 7 ended ERROR; see show plan -id 7") {
		t.Errorf("ERROR: stdout %q stderr %q", out, errw)
	}

	// Without -wait nothing is waited for.
	fake := planAdmin(nil, "SUCCEEDED")
	sh, _, _ = newShell(fake)
	if code := sh.RunCommand(ctx, deploy[:len(deploy)-1]); code != ExitOK || len(fake.calls) != 1 {
		t.Errorf("no -wait: exit %d, sent %v", code, fake.calls)
	}

	// The leader's node goes away for a while: keep asking.
	fake = planAdmin(unreachable(), "RUNNING", "", "", "INTERRUPTED")
	sh, _, errw = newShell(fake)
	if code := sh.RunCommand(ctx, deploy); code != ExitFailed || len(fake.calls) != 5 {
		t.Errorf("unreachable, then INTERRUPTED: exit %d after %d calls, want 1 after 5 (%s)", code, len(fake.calls), errw)
	}

	// Leadership moving (Unavailable) is retried as well.
	fake = planAdmin(grpcstatus.Error(codes.Unavailable, "admin: leadership is moving; retry"), "", "SUCCEEDED")
	sh, _, errw = newShell(fake)
	if code := sh.RunCommand(ctx, deploy); code != ExitOK {
		t.Errorf("Unavailable, then SUCCEEDED: exit %d (%s)", code, errw)
	}

	// Unreachable until the deadline: exit 3.
	fake = planAdmin(unreachable(), "")
	sh, _, errw = newShell(fake)
	sh.WaitTimeout = 20 * time.Millisecond
	if code := sh.RunCommand(ctx, deploy); code != ExitUnreachable {
		t.Errorf("unreachable: exit %d, want 3", code)
	}
	if !strings.Contains(errw.String(), "Error: waiting for plan 7 for 20ms: admin: no storage node answered") {
		t.Errorf("unreachable: stderr %q", errw)
	}

	// Still running at the deadline: exit 1.
	fake = planAdmin(nil, "RUNNING")
	sh, _, errw = newShell(fake)
	sh.WaitTimeout = 20 * time.Millisecond
	if code := sh.RunCommand(ctx, deploy); code != ExitFailed || !strings.Contains(errw.String(), "plan 7 has not ended after 20ms") {
		t.Errorf("timeout: exit %d, stderr %q", code, errw)
	}

	// Another error while waiting ends the wait.
	fake = planAdmin(grpcstatus.Error(codes.NotFound, "no plan 7"), "")
	sh, _, errw = newShell(fake)
	if code := sh.RunCommand(ctx, deploy); code != ExitFailed || len(fake.calls) != 2 || !strings.Contains(errw.String(), "Error: waiting for plan 7: no plan 7") {
		t.Errorf("NotFound: exit %d after %v, stderr %q", code, fake.calls, errw)
	}
}

func TestWaitPlanExecute(t *testing.T) {
	// plan execute's reply may not name the plan: the -id is used.
	fake := &fakeAdmin{answer: func(n int, command string, args map[string]string) (*cairnpb.AdminReply, error) {
		if command == "plan execute" {
			return &cairnpb.AdminReply{Text: "Plan 4 is running"}, nil
		}
		return &cairnpb.AdminReply{Text: "Plan 4 SUCCEEDED", Json: []byte(`{"id": 4, "state": "SUCCEEDED"}`)}, nil
	}}
	sh, _, errw := newShell(fake)
	if code := sh.RunCommand(context.Background(), []string{"plan", "execute", "--id", "4", "--wait"}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errw)
	}
	if len(fake.calls) != 2 || fake.calls[1].args["id"] != "4" {
		t.Errorf("sent %v, want plan execute and plan wait -id 4", fake.calls)
	}
}

func TestWaitAlreadyEnded(t *testing.T) {
	fake := &fakeAdmin{answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
		return &cairnpb.AdminReply{Text: "Plan 2 SUCCEEDED", Json: []byte(`{"plan_id": "2", "state": "SUCCEEDED"}`)}, nil
	}}
	sh, out, _ := newShell(fake)
	if code := sh.RunCommand(context.Background(), []string{"plan", "remove-sn", "-sn", "sn3", "-wait"}); code != ExitOK || len(fake.calls) != 1 {
		t.Errorf("exit %d after %v, want 0 after one call", code, fake.calls)
	}
	if out.String() != "Plan 2 SUCCEEDED\nPlan 2 SUCCEEDED\n" {
		t.Errorf("stdout %q", out)
	}
}

func TestWaitNoPlanID(t *testing.T) {
	fake := &fakeAdmin{answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
		return &cairnpb.AdminReply{Text: "done", Json: []byte(`{"ok": true}`)}, nil
	}}
	sh, _, errw := newShell(fake)
	if code := sh.RunCommand(context.Background(), []string{"plan", "remove-sn", "-sn", "3", "-wait"}); code != ExitFailed ||
		!strings.Contains(errw.String(), "names no plan_id") {
		t.Errorf("exit %d, stderr %q", code, errw)
	}
}

// TestWaitNothingToDo: a plan command that had nothing to change created
// no plan; -wait has nothing to wait for and exits 0.
func TestWaitNothingToDo(t *testing.T) {
	fake := &fakeAdmin{answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
		return &cairnpb.AdminReply{Text: "nothing to deploy.", Json: []byte(`{"nothing_to_do": true}`)}, nil
	}}
	sh, out, errw := newShell(fake)
	if code := sh.RunCommand(context.Background(), []string{"plan", "deploy-topology", "-name", "T", "-wait"}); code != ExitOK ||
		out.String() != "nothing to deploy.\n" || errw.Len() != 0 || len(fake.calls) != 1 {
		t.Errorf("exit %d after %v, stdout %q, stderr %q; want 0 after one call", code, fake.calls, out, errw)
	}
}

// TestWaitServiceAlreadyRunning: plan start-service of a running replica
// creates no plan; with -wait it prints the reply once and exits 0.
func TestWaitServiceAlreadyRunning(t *testing.T) {
	fake := &fakeAdmin{answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
		return &cairnpb.AdminReply{Text: "rg1-rn1 is already running; nothing to do",
			Json: []byte(`{"service": "rg1-rn1", "state": "RUNNING", "nothing_to_do": true}`)}, nil
	}}
	sh, out, errw := newShell(fake)
	if code := sh.RunCommand(context.Background(), []string{"plan", "start-service", "-service", "rg1-rn1", "-wait"}); code != ExitOK ||
		out.String() != "rg1-rn1 is already running; nothing to do\n" || errw.Len() != 0 || len(fake.calls) != 1 {
		t.Errorf("exit %d after %v, stdout %q, stderr %q; want 0 after one call", code, fake.calls, out, errw)
	}
}

func TestWaitJSON(t *testing.T) {
	sh, out, errw := newShell(planAdmin(nil, "RUNNING", "CANCELED"))
	sh.JSON = true
	if code := sh.RunCommand(context.Background(), []string{"plan", "deploy-admin", "-sn", "sn2", "-wait"}); code != ExitFailed {
		t.Errorf("exit %d, want 1", code)
	}
	var doc map[string]any
	dec := json.NewDecoder(out)
	if err := dec.Decode(&doc); err != nil || doc["state"] != "CANCELED" || dec.More() {
		t.Errorf("stdout %q, want only the final plan document", out)
	}
	if errw.Len() != 0 {
		t.Errorf("stderr %q, want nothing: the document says CANCELED", errw)
	}
}

func TestWaitInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	fake := &fakeAdmin{answer: func(n int, command string, _ map[string]string) (*cairnpb.AdminReply, error) {
		if command == "plan wait" {
			cancel() // Ctrl-C while waiting
			return nil, grpcstatus.Error(codes.Canceled, "context canceled")
		}
		return &cairnpb.AdminReply{Json: []byte(`{"plan_id": 9}`)}, nil
	}}
	sh, _, errw := newShell(fake)
	if code := sh.RunCommand(ctx, []string{"plan", "deploy-admin", "-sn", "2", "-wait"}); code != ExitFailed ||
		!strings.Contains(errw.String(), "stopped waiting for plan 9, which goes on") {
		t.Errorf("exit %d, stderr %q", code, errw)
	}
}
