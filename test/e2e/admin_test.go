package e2e

// The store administration acceptance test: the Oracle NoSQL YCSB white
// paper's deployment (examples/whitepaper/deploy.kvs, ports changed only) on
// three real storage nodes, with the admin leader SIGKILLed in the middle of
// plan deploy-topology, then cairn bench with dataintegrity on the result.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// storageNode is a running `cairn sn start`.
type storageNode struct {
	*proc
	root string
	port int
	// extra flags and env (KEY=VALUE) of every start.
	extra, env []string
	// owner, if set, is the test whose end stops the process (a parent
	// test whose subtests restart the node); default: the test starting it.
	owner testing.TB
}

// initNodes runs cairn sn init for n nodes on free ports.
func initNodes(t *testing.T, n int) []*storageNode {
	t.Helper()
	return initNodesWith(t, n, nil)
}

// initNodesWith is initNodes with extra flags of sn init for some nodes,
// by index (e.g. --storagedir).
func initNodesWith(t *testing.T, n int, extra map[int][]string) []*storageNode {
	t.Helper()
	var out []*storageNode
	for i := range n {
		sn := &storageNode{root: filepath.Join(t.TempDir(), fmt.Sprintf("sn%d", i+1)), port: freePort(t)}
		args := []string{"sn", "init", "--root", sn.root, "--host", "127.0.0.1", "--port", strconv.Itoa(sn.port), "--capacity", "2"}
		mustCairn(t, append(args, extra[i]...)...)
		out = append(out, sn)
	}
	return out
}

// start starts the node and waits for its ready line.
func (sn *storageNode) start(t *testing.T) {
	t.Helper()
	owner := testing.TB(t)
	if sn.owner != nil {
		owner = sn.owner
	}
	sn.proc = startProcEnv(owner, fmt.Sprintf("sn:%d", sn.port), sn.env, append([]string{"sn", "start", "--root", sn.root}, sn.extra...)...)
	waitFor(t, readyTimeout, "storage node ready line", func() bool {
		return strings.Contains(sn.stdout.String(), "ready at") || !sn.running()
	})
	if !sn.running() {
		t.Fatalf("storage node %d exited: %s", sn.port, sn.stderr.String())
	}
}

func (sn *storageNode) addr() string { return "127.0.0.1:" + strconv.Itoa(sn.port) }

// waitFor polls ok until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	if !within(d, ok) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// admin runs one cairn admin command against node sn.
func admin(t *testing.T, sn *storageNode, args ...string) (int, string, string) {
	t.Helper()
	return runCairn(t, append([]string{"admin", "-host", "127.0.0.1", "-port", strconv.Itoa(sn.port)}, args...)...)
}

// whitePaperScript returns the committed example with its ports replaced,
// split before plan deploy-topology.
func whitePaperScript(t *testing.T, nodes []*storageNode) (before, deploy, after []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "whitepaper", "deploy.kvs"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for i, p := range []string{"5000", "6000", "7000"} {
		text = regexp.MustCompile(`-port `+p+`\b`).ReplaceAllString(text, "-port "+strconv.Itoa(nodes[i].port))
	}
	part := &before
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		switch {
		case strings.HasPrefix(line, "plan deploy-topology"):
			deploy, part = append(deploy, line), &after
		default:
			*part = append(*part, line)
		}
	}
	if len(deploy) != 1 || len(after) == 0 {
		t.Fatalf("the example script has no plan deploy-topology line followed by checks:\n%s", text)
	}
	return before, deploy, after
}

// checkAudit: the node's audit log (ROOT/audit.log) holds one JSON line per
// admin command it received, with where from and how it ended; want is one
// of them, done.
func checkAudit(t *testing.T, root, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "audit.log"))
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	found := false
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Node, From, What, Outcome string }
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.From == "" || e.What == "" || e.Outcome == "" {
			t.Fatalf("audit line %q: %v (want node, from, what and outcome)", line, err)
		}
		found = found || (e.What == want && e.Outcome == "ok")
	}
	if !found {
		t.Errorf("the audit log has no %q done:\n%s", want, b)
	}
}

func writeScript(t *testing.T, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.kvs")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type planJSON struct {
	PlanID int    `json:"plan_id"`
	State  string `json:"state"`
	Plan   struct {
		Tasks []struct {
			State string `json:"state"`
		} `json:"tasks"`
	} `json:"plan"`
}

func TestWhitePaperDeploymentSurvivesAdminLeaderKill(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	nodes := initNodes(t, 3)
	for _, sn := range nodes {
		// Each plan task waits 400ms first, so the admin leader can be
		// killed between the tasks of plan deploy-topology.
		sn.env = []string{"CAIRN_FAILPOINT_TASK_DELAY=400ms"}
		sn.start(t)
	}
	before, deploy, after := whitePaperScript(t, nodes)
	// Three admins, so the admin survives losing its leader.
	before = append(before, "plan deploy-admin -sn sn2 -wait", "plan deploy-admin -sn sn3 -wait")
	if code, out, errOut := admin(t, nodes[0], "-script", writeScript(t, before)); code != 0 {
		t.Fatalf("deploy script (before deploy-topology): exit %d\n%s\n%s", code, out, errOut)
	}
	checkAudit(t, nodes[0].root, "plan deploy-admin -sn sn2 -wait")
	_, out, _ := admin(t, nodes[0], "-json", "show", "admins")
	var admins []struct {
		SN     uint64 `json:"sn"`
		Leader bool   `json:"leader"`
	}
	if err := json.Unmarshal([]byte(out), &admins); err != nil || len(admins) != 3 {
		t.Fatalf("show admins: %v, want 3 admins: %s", err, out)
	}
	var leader uint64
	for _, a := range admins {
		if a.Leader {
			leader = a.SN
		}
	}
	if leader == 0 {
		t.Fatalf("no admin leader in %s", out)
	}
	victim := nodes[leader-1]
	var survivor *storageNode
	for _, sn := range nodes {
		if sn != victim {
			survivor = sn
			break
		}
	}

	// Start deploy-topology without -wait; kill the admin leader once the
	// plan has finished its first task.
	cmd := strings.Fields(strings.Replace(deploy[0], " -wait", "", 1))
	code, out, errOut := admin(t, nodes[0], append([]string{"-json"}, cmd...)...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s %s", deploy[0], code, out, errOut)
	}
	var started planJSON
	if err := json.Unmarshal([]byte(out), &started); err != nil || started.PlanID == 0 {
		t.Fatalf("plan deploy-topology reply: %v: %s", err, out)
	}
	id := strconv.Itoa(started.PlanID)
	waitFor(t, 30*time.Second, "the first task of deploy-topology", func() bool {
		_, out, _ := admin(t, victim, "-json", "show", "plan", "-id", id)
		var p planJSON
		return json.Unmarshal([]byte(out), &p) == nil && len(p.Plan.Tasks) > 0 && p.Plan.Tasks[0].State == "SUCCEEDED"
	})
	killedAt := time.Now()
	victim.kill()
	t.Logf("killed the admin leader sn%d during plan %s", leader, id)

	// Another admin takes over and the plan completes.
	code, out, errOut = admin(t, survivor, "-json", "plan", "wait", "-id", id)
	var done planJSON
	if code != 0 || json.Unmarshal([]byte(out), &done) != nil || done.State != "SUCCEEDED" {
		t.Fatalf("plan wait -id %s after the kill: exit %d: %s %s", id, code, out, errOut)
	}
	t.Logf("plan %s SUCCEEDED %v after the admin leader was killed", id, time.Since(killedAt).Round(time.Millisecond))
	_, events, _ := admin(t, survivor, "show", "events")
	if !strings.Contains(events, "plan "+id+" (deploy-topology) resumed") {
		t.Errorf("show events does not say the new admin leader resumed plan %s:\n%s", id, events)
	}

	// The killed node comes back; the rest of the script then passes.
	victim.start(t)
	var lastOut string
	waitFor(t, 30*time.Second, "verify configuration to pass", func() bool {
		code, out, _ := admin(t, survivor, "verify", "configuration")
		lastOut = out
		return code == 0
	})
	code, out, errOut = admin(t, survivor, "-script", writeScript(t, after))
	if code != 0 {
		t.Fatalf("deploy script (after deploy-topology): exit %d\n%s\n%s\nlast verify:\n%s", code, out, errOut, lastOut)
	}
	for _, want := range []string{"numPartitions=100", "shard=[rg1] num partitions=50", "shard=[rg2] num partitions=50", "0 violations"} {
		if !strings.Contains(out, want) {
			t.Errorf("script output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "RUNNING,MASTER") + strings.Count(out, "RUNNING,REPLICA"); n != 6 {
		t.Errorf("show topology lists %d running replicas, want 2 shards x 3:\n%s", n, out)
	}

	// cairn bench loads and runs workload A with dataintegrity: no errors.
	hosts := nodes[0].addr() + "," + nodes[1].addr() + "," + nodes[2].addr()
	common := []string{"-P", filepath.Join("..", "..", "workloads", "workloada"), "-db", "cairn", "-threads", "8",
		"-p", "cairn.hosts=" + hosts, "-p", "cairn.store=kvstore", "-p", "recordcount=2000", "-p", "operationcount=6000", "-p", "dataintegrity=true"}
	for _, phase := range []string{"load", "run"} {
		code, out, errOut := runCairn(t, append([]string{"bench", phase}, common...)...)
		if code != 0 || strings.Contains(out, "Return=ERROR") || strings.Contains(out, "ERROR") {
			t.Fatalf("bench %s: exit %d\n%s\n%s", phase, code, out, errOut)
		}
		t.Logf("bench %s: %s", phase, grepLine(out, "[OVERALL], Throughput"))
		if phase == "load" {
			// The run reads NONE_REQUIRED, which any replica may serve from
			// what it has applied: wait until every replica holds the load
			// (the restarted node may still be catching up).
			waitFor(t, 30*time.Second, "every replica to apply the load", func() bool {
				_, out, _ := admin(t, survivor, "show", "topology")
				return replicasConverged(out)
			})
		}
	}
}

var appliedRE = regexp.MustCompile(`\[(rg\d+)-rn\d+\].*applied=(\d+)`)

// replicasConverged reports whether show topology lists every replica of
// each shard at the same applied index.
func replicasConverged(topo string) bool {
	applied := map[string]string{}
	n := 0
	for _, m := range appliedRE.FindAllStringSubmatch(topo, -1) {
		n++
		if a, ok := applied[m[1]]; ok && a != m[2] {
			return false
		}
		applied[m[1]] = m[2]
	}
	return n == 6
}

func grepLine(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
