package e2e

// A plan command given -wait follows its plan to the end when the node
// the shell talks to is SIGKILLed: it says so once and carries on through
// another admin of the store, without sending the plan again.

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var startedPlanRE = regexp.MustCompile(`Started plan (\d+)\.`)

func TestAdminWaitFollowsPlanThroughAnotherAdmin(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	nodes := initNodes(t, 3)
	for _, sn := range nodes {
		// Each plan task waits 400ms first, so plan deploy-topology runs
		// long enough for the node the shell follows it through to be killed.
		sn.env = []string{"CAIRN_FAILPOINT_TASK_DELAY=400ms"}
		sn.start(t)
	}
	before, deploy, _ := whitePaperScript(t, nodes)
	before = append(before, "plan deploy-admin -sn sn2 -wait", "plan deploy-admin -sn sn3 -wait")
	if code, out, errOut := admin(t, nodes[0], "-script", writeScript(t, before)); code != 0 {
		t.Fatalf("deploy script (before deploy-topology): exit %d\n%s\n%s", code, out, errOut)
	}
	ids, leader := showAdmins(t, nodes[0])
	if len(ids) != 3 || leader == 0 {
		t.Fatalf("show admins: admins %v, leader %d; want 3 admins and a leader", ids, leader)
	}
	victim, survivor := nodes[leader-1], nodes[leader%3]

	// The shell talks to the admin leader only (no -helper-hosts).
	args := append([]string{"admin", "-host", "127.0.0.1", "-port", strconv.Itoa(victim.port)}, strings.Fields(deploy[0])...)
	sh, id := startWaiting(t, "admin -wait", args...)
	n, _ := strconv.Atoi(id)
	// Kill once the plan is under way: the shell, which asked show admins
	// as soon as it had the plan's id, follows it.
	waitFor(t, 30*time.Second, "plan "+id+"'s first task to succeed", func() bool {
		return showPlanJSON(t, survivor, n).Plan.Tasks[0].State == "SUCCEEDED"
	})
	if p := showPlanJSON(t, survivor, n); p.State != "RUNNING" {
		t.Fatalf("plan %s is %s before the kill; want it RUNNING (a longer CAIRN_FAILPOINT_TASK_DELAY?)", id, p.State)
	}
	victim.kill()
	killed := time.Now()
	t.Logf("killed sn%d (%s), the admin leader the shell follows plan %s through", leader, victim.addr(), id)

	code, ok := sh.waitExit(45 * time.Second)
	if !ok {
		t.Fatalf("the shell still waits %v after its node was killed; stderr so far: %q", time.Since(killed).Round(time.Second), sh.stderr.String())
	}
	t.Logf("the shell ended %v after the kill", time.Since(killed).Round(time.Millisecond))
	out, errOut := sh.stdout.String(), sh.stderr.String()
	if code != 0 || !regexp.MustCompile(`Plan `+id+` \[deploy-topology[^\n]*\nState: +SUCCEEDED\n`).MatchString(out) {
		t.Fatalf("exit %d, want 0 with plan %s SUCCEEDED\nstdout:\n%s\nstderr:\n%s", code, id, out, errOut)
	}
	want := "Warning: lost the admin at " + victim.addr() + " (it does not answer); following plan " + id + " through another admin\n"
	if errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	// The plan was followed, not sent again.
	_, plans, _ := admin(t, survivor, "show", "plans")
	if c := strings.Count(plans, "deploy-topology"); c != 1 {
		t.Errorf("show plans lists %d deploy-topology plans, want 1:\n%s", c, plans)
	}
	noAdminLeft(t, survivor, nodes[3-(leader-1)-leader%3])
}

// noAdminLeft follows a plan through the admin on survivor and kills the
// node of the store's other live admin (other): with one admin of three
// left, no admin answers, and -wait gives up after its -failover-timeout
// with exit 3, naming the plan, which goes on.
func noAdminLeft(t *testing.T, survivor, other *storageNode) {
	// verify-data's task on the killed node retries, so the plan runs on.
	sh, id := startWaiting(t, "admin -wait, no admin left", "admin", "-host", "127.0.0.1", "-port", strconv.Itoa(survivor.port),
		"-failover-timeout", "2s", "plan", "verify-data", "-wait")
	other.kill()
	killed := time.Now()
	code, ok := sh.waitExit(45 * time.Second)
	if !ok {
		t.Fatalf("the shell still waits %v after the store lost its admin majority; stderr so far: %q", time.Since(killed).Round(time.Second), sh.stderr.String())
	}
	errOut := sh.stderr.String()
	t.Logf("the shell ended %v after the kill, exit %d:\n%s", time.Since(killed).Round(time.Millisecond), code, errOut)
	for _, w := range []string{"no admin answered for 2s while following plan " + id, "follow it with plan wait -id " + id} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q", w)
		}
	}
	if code != 3 {
		t.Errorf("exit %d, want 3 (no admin answers)", code)
	}
}

// startWaiting starts cairn admin with args, a plan command with -wait, and
// returns the process, still waiting, and the id of the plan it started.
func startWaiting(t *testing.T, name string, args ...string) (*proc, string) {
	t.Helper()
	sh := startProc(t, name, args...)
	var id string
	waitFor(t, 30*time.Second, "the shell to print the plan it started", func() bool {
		if m := startedPlanRE.FindStringSubmatch(sh.stdout.String()); m != nil {
			id = m[1]
		}
		return id != "" || !sh.running()
	})
	if !sh.running() {
		t.Fatalf("the shell exited before the kill: %s", sh.stderr.String())
	}
	return sh, id
}
