package e2e

// Plans on a real store: plan stop-service keeps a majority of each
// shard's replicas running unless given -force; a stopped replica tells
// clients how to start it; a plan queued behind another says it waits; an
// interrupted task says INTERRUPTED; plan state errors are sentences.

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
)

// planDocJSON is what show plan -json prints.
type planDocJSON struct {
	PlanID     int    `json:"plan_id"`
	State      string `json:"state"`
	WaitingFor int    `json:"waiting_for"`
	Plan       struct {
		Args       map[string]string `json:"args"`
		Error      string            `json:"error"`
		WaitingFor int               `json:"waiting_for"`
		Tasks      []struct {
			State    string `json:"state"`
			Attempts int    `json:"attempts"`
		} `json:"tasks"`
	} `json:"plan"`
}

// showPlanJSON runs show plan -json -id id on sn.
func showPlanJSON(t *testing.T, sn *storageNode, id int) planDocJSON {
	t.Helper()
	code, out, errOut := admin(t, sn, "-json", "show", "plan", "-id", strconv.Itoa(id))
	var p planDocJSON
	if err := json.Unmarshal([]byte(out), &p); code != 0 || err != nil || len(p.Plan.Tasks) == 0 {
		t.Fatalf("show plan -id %d: exit %d, %v\n%s\n%s", id, code, err, out, errOut)
	}
	return p
}

// startPlanJSON runs a plan command with -json and returns the plan's id.
func startPlanJSON(t *testing.T, sn *storageNode, args ...string) int {
	t.Helper()
	code, out, errOut := admin(t, sn, append([]string{"-json"}, args...)...)
	var p planDocJSON
	if err := json.Unmarshal([]byte(out), &p); code != 0 || err != nil || p.PlanID == 0 {
		t.Fatalf("%s: exit %d, %v\n%s\n%s", strings.Join(args, " "), code, err, out, errOut)
	}
	return p.PlanID
}

// planAdmin runs a command on sn and checks its exit code and that its
// output holds every string of want.
func planAdmin(t *testing.T, sn *storageNode, wantCode int, want []string, args ...string) string {
	t.Helper()
	code, out, errOut := admin(t, sn, args...)
	all := out + errOut
	ok := code == wantCode
	for _, w := range want {
		ok = ok && strings.Contains(all, w)
	}
	if !ok {
		t.Errorf("cairn admin %s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, want, out, errOut)
	}
	return all
}

var masterRE = regexp.MustCompile(`\[rg1-rn(\d+)\].*RUNNING,MASTER`)

// TestAdminStopServiceKeepsMajority stops rg1's leader replica, then checks
// that the store keeps serving rg1 (a client whose cached leader is the
// stopped replica goes elsewhere), that the stopped replica tells a KV
// request how to start it, and that stopping a second replica of rg1 is
// refused at once and again when a PENDING plan created earlier runs,
// unless -force is given.
func TestAdminStopServiceKeepsMajority(t *testing.T) {
	nodes := deployWhitePaper(t)
	c := openStore(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	keyOf := func(i int) client.Key { return client.MustParseKey(fmt.Sprintf("/stop/k%02d/-/v", i)) }
	for i := range 20 {
		if _, err := c.Put(ctx, keyOf(i), []byte("v")); err != nil { // caches each shard's leader
			t.Fatalf("put %d: %v", i, err)
		}
	}
	_, topo, _ := admin(t, nodes[0], "show", "topology")
	m := masterRE.FindStringSubmatch(topo)
	if m == nil {
		t.Fatalf("show topology names no leader of rg1:\n%s", topo)
	}
	x, _ := strconv.Atoi(m[1]) // rg1's leader: stop it
	y := x%3 + 1               // another replica of rg1
	stopX, stopY := fmt.Sprintf("rg1-rn%d", x), fmt.Sprintf("rg1-rn%d", y)
	pendingY := startPlanJSON(t, nodes[0], "plan", "stop-service", "-service", stopY, "-noexecute")
	planAdmin(t, nodes[0], 0, []string{"SUCCEEDED"}, "plan", "stop-service", "-service", stopX, "-wait")

	// A KV request on the stopped replica's node says how to start it.
	kv := dial(t, nodes[x-1].addr())
	var inRG1 client.Key
	found := false
	for i := range 20 {
		rctx, rcancel := rpcCtx()
		_, err := kv.Get(rctx, &cairnpb.GetRequest{Key: key([]string{"stop", fmt.Sprintf("k%02d", i)}, "v")})
		rcancel()
		st, d := errorDetail(err)
		if st == nil || !strings.Contains(st.Message(), "stopped by plan stop-service") {
			continue
		}
		inRG1, found = keyOf(i), true
		if want := "replica " + stopX + " (shard rg1 on sn" + m[1] + ") is stopped by plan stop-service; another replica must serve the request, or start it with plan start-service -service " + stopX; st.Message() != want {
			t.Errorf("KV error on the stopped replica:\n got %q\nwant %q", st.Message(), want)
		}
		if d.GetKind() != "wrong_shard" || d.GetAction() != cairnpb.ErrorDetail_ACTION_REFRESH {
			t.Errorf("KV error on the stopped replica is %s/%s, want wrong_shard/REFRESH", d.GetKind(), d.GetAction())
		}
		break
	}
	if !found {
		t.Fatalf("no key of 20 reached the stopped replica %s on sn%d", stopX, x)
	}
	// The client's cached leader of rg1 is the stopped replica's node.
	pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
	_, err := c.Put(pctx, inRG1, []byte("after stop"))
	pcancel()
	if err != nil {
		t.Errorf("put to rg1 with its old leader %s stopped: %v", stopX, err)
	}

	// Stopping a second replica of rg1 would leave one of three.
	planAdmin(t, nodes[0], 1, []string{
		"stopping " + stopY + " would leave shard rg1 with 1 of its 3 replicas running, fewer than the 2 it needs",
		stopX + " (stopped by plan stop-service)", "plan start-service -service " + stopX, "add -force"},
		"plan", "stop-service", "-service", stopY)
	// The PENDING plan created before checks again when it runs.
	planAdmin(t, nodes[0], 1, []string{"ERROR", "stopping " + stopY + " would leave shard rg1 with 1 of its 3"},
		"plan", "execute", "-id", strconv.Itoa(pendingY), "-wait")
	if p := showPlanJSON(t, nodes[0], pendingY); p.State != "ERROR" || p.Plan.Tasks[0].Attempts != 1 {
		t.Errorf("plan %d: %s after %d attempts, want ERROR at once", pendingY, p.State, p.Plan.Tasks[0].Attempts)
	}
	// Plan state errors are sentences.
	id := strconv.Itoa(pendingY)
	planAdmin(t, nodes[0], 0, []string{"CANCELED"}, "plan", "cancel", "-id", id)
	planAdmin(t, nodes[0], 1, []string{"plan " + id + " is CANCELED; only a PENDING, INTERRUPTED or ERROR plan can be canceled"}, "plan", "cancel", "-id", id)
	planAdmin(t, nodes[0], 1, []string{"plan " + id + " is CANCELED; only a PENDING, INTERRUPTED or ERROR plan can be executed"}, "plan", "execute", "-id", id)
	planAdmin(t, nodes[0], 1, []string{"plan " + id + " is CANCELED; only a RUNNING plan can be interrupted"}, "plan", "interrupt", "-id", id)

	// -force skips the check and is recorded in the plan.
	forced := startPlanJSON(t, nodes[0], "plan", "stop-service", "-service", stopY, "-force", "-noexecute")
	if p := showPlanJSON(t, nodes[0], forced); p.Plan.Args["force"] != "true" {
		t.Errorf("plan %d's args lack force: %v", forced, p.Plan.Args)
	}
	planAdmin(t, nodes[0], 0, []string{"[stop-service -force -service " + stopY + "]"}, "show", "plan", "-id", strconv.Itoa(forced))
	planAdmin(t, nodes[0], 0, []string{"CANCELED"}, "plan", "cancel", "-id", strconv.Itoa(forced))
	planAdmin(t, nodes[0], 0, []string{"SUCCEEDED"}, "plan", "start-service", "-service", stopX, "-wait")
}

// TestAdminPlanQueueAndInterrupt runs a plan that keeps retrying (its node
// is down) with another plan queued behind it: show plan and show plans say
// the second waits for the first; plan interrupt marks the running task
// INTERRUPTED, and plan execute runs it again.
func TestAdminPlanQueueAndInterrupt(t *testing.T) {
	nodes := deployWhitePaper(t)
	nodes[2].kill()
	// With sn3 down, a replica of rg1 on another node may not stop.
	planAdmin(t, nodes[0], 1, []string{"rg1-rn3 (its node sn3 does not answer)", "start sn3 with cairn sn start", "-force"},
		"plan", "stop-service", "-service", "rg1-rn1")

	first := startPlanJSON(t, nodes[0], "plan", "start-service", "-service", "rg1-rn3") // retries: sn3 is down
	queued := startPlanJSON(t, nodes[0], "plan", "deploy-zone", "-name", "Later", "-rf", "1")
	planAdmin(t, nodes[0], 0, []string{fmt.Sprintf("Queued plan %d: it starts when plan %d finishes", queued+1, first)},
		"plan", "deploy-zone", "-name", "Later2", "-rf", "1")
	waiting := fmt.Sprintf("RUNNING (waiting for plan %d to finish)", first)
	planAdmin(t, nodes[0], 0, []string{"State:   " + waiting}, "show", "plan", "-id", strconv.Itoa(queued))
	planAdmin(t, nodes[0], 0, []string{fmt.Sprintf("RUNNING     -name Later -rf 1  (waiting for plan %d to finish)", first)}, "show", "plans")
	if p := showPlanJSON(t, nodes[0], queued); p.State != "RUNNING" || p.WaitingFor != first || p.Plan.WaitingFor != first {
		t.Errorf("show plan -json -id %d: state %s, waiting_for %d/%d; want RUNNING waiting for %d", queued, p.State, p.WaitingFor, p.Plan.WaitingFor, first)
	}
	_, out, _ := admin(t, nodes[0], "-json", "show", "plans")
	var plans []struct {
		ID         int `json:"id"`
		WaitingFor int `json:"waiting_for"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) < queued || plans[queued-1].WaitingFor != first {
		t.Errorf("show plans -json: %v; plan %d should wait for plan %d:\n%s", err, queued, first, out)
	}

	waitFor(t, 30*time.Second, "the first plan's task to retry", func() bool {
		p := showPlanJSON(t, nodes[0], first)
		return p.Plan.Tasks[0].State == "RUNNING" && p.Plan.Tasks[0].Attempts > 1
	})
	planAdmin(t, nodes[0], 0, []string{"INTERRUPTED"}, "plan", "interrupt", "-id", strconv.Itoa(first))
	planAdmin(t, nodes[0], 0, []string{"SUCCEEDED"}, "plan", "wait", "-id", strconv.Itoa(queued), "-seconds", "60")
	// The executor has moved on: the interrupted task still says so.
	planAdmin(t, nodes[0], 0, []string{"State:   INTERRUPTED", "   1 INTERRUPTED start rg1-rn3"}, "show", "plan", "-id", strconv.Itoa(first))
	if p := showPlanJSON(t, nodes[0], first); p.Plan.Tasks[0].State != "INTERRUPTED" {
		t.Errorf("plan %d's task is %s after plan interrupt, want INTERRUPTED", first, p.Plan.Tasks[0].State)
	}

	// Executed again, the task runs (and retries) again, then succeeds
	// once sn3 is back.
	planAdmin(t, nodes[0], 0, []string{"RUNNING"}, "plan", "execute", "-id", strconv.Itoa(first))
	waitFor(t, 30*time.Second, "the task to run again", func() bool {
		return showPlanJSON(t, nodes[0], first).Plan.Tasks[0].State == "RUNNING"
	})
	nodes[2].start(t)
	planAdmin(t, nodes[0], 0, []string{"State:   SUCCEEDED", "   1 SUCCEEDED start rg1-rn3"}, "plan", "wait", "-id", strconv.Itoa(first), "-seconds", "120")
}
