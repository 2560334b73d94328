package e2e

// Health reports on a real three-node store: ping's shard and admin status
// and exit code, show admins' states, verify configuration's advice when a
// shard has no leader, lower_snake_case JSON, and topology candidates over
// a deployed store.

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkAdmin runs a cairn admin command on sn and checks its exit code
// and that its stdout+stderr holds every want; it returns stdout.
func checkAdmin(t *testing.T, sn *storageNode, code int, want []string, args ...string) string {
	t.Helper()
	got, out, errOut := admin(t, sn, args...)
	if got != code {
		t.Errorf("cairn admin %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got, code, out, errOut)
	}
	for _, w := range want {
		if !strings.Contains(out+errOut, w) {
			t.Errorf("cairn admin %s: output lacks %q:\n%s%s", strings.Join(args, " "), w, out, errOut)
		}
	}
	return out
}

// awaitAdmin waits up to a minute for the command to exit 0 with every
// want in its output.
func awaitAdmin(t *testing.T, sn *storageNode, want []string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		code, out, errOut := admin(t, sn, args...)
		if code == 0 && !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(out, w) }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cairn admin %s: after a minute, exit %d, want 0 with %q:\n%s%s", strings.Join(args, " "), code, want, out, errOut)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var noLeaderRE = regexp.MustCompile(`(?m)^Verify: violation (rg\d+): (.*)$`)

// TestAdminHealthReports stops storage nodes under a deployed store and
// checks what ping, show admins and verify configuration say.
func TestAdminHealthReports(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	nodes := deployWhitePaper(t)
	sn1 := nodes[0]
	awaitAdmin(t, sn1, []string{"Shard Status: healthy: 2 writable-degraded: 0 read-only: 0 offline: 0 total: 2", "Admin Status: healthy"}, "ping")

	// JSON: lower_snake_case keys, [] for empty lists.
	out := checkAdmin(t, sn1, 0, []string{`"violations": []`, `"rule": "admin-count"`}, "-json", "verify", "configuration")
	var v map[string][]map[string]string
	if err := json.Unmarshal([]byte(out), &v); err != nil || v["violations"] == nil || v["warnings"][0]["message"] == "" {
		t.Errorf("verify configuration -json: %v: %s", err, out)
	}
	checkAdmin(t, sn1, 0, []string{`"violations": []`, `"warnings": []`}, "-json", "topology", "validate")
	out = checkAdmin(t, sn1, 0, nil, "-json", "ping")
	var ping struct {
		ShardStatus map[string]int `json:"shard_status"`
		AdminStatus string         `json:"admin_status"`
		Problems    bool           `json:"problems"`
		Nodes       []struct {
			Status   string            `json:"status"`
			Replicas []json.RawMessage `json:"replicas"`
		} `json:"storage_nodes"`
	}
	if err := json.Unmarshal([]byte(out), &ping); err != nil || ping.ShardStatus["healthy"] != 2 || ping.AdminStatus != "healthy" ||
		ping.Problems || len(ping.Nodes) != 3 || len(ping.Nodes[2].Replicas) != 2 {
		t.Errorf("ping -json: %v: %s", err, out)
	}

	// Two of three nodes down: no shard can take writes; verify names the
	// nodes that do not answer. (The single admin on sn1 keeps working.)
	for _, sn := range nodes[1:] {
		sn.stop()
	}
	out = checkAdmin(t, sn1, 1, []string{"read-only: 2", "Status: UNREACHABLE"}, "ping")
	if strings.Contains(out, "healthy: 2") {
		t.Errorf("ping with two of three nodes down:\n%s", out)
	}
	out = checkAdmin(t, sn1, 1, []string{"only 1 of its 3 replicas run", "sn2, sn3 do not answer"}, "verify", "configuration")
	if n := len(noLeaderRE.FindAllString(out, -1)); n != 2 {
		t.Errorf("verify configuration: %d shard violations, want one per shard:\n%s", n, out)
	}
	for _, sn := range nodes[1:] {
		sn.start(t)
	}
	awaitAdmin(t, sn1, []string{"0 violations"}, "verify", "configuration")

	// Three admins, then one node down: its admin is UNREACHABLE, every
	// shard writable-degraded, and ping exits 1.
	for _, sn := range []string{"sn2", "sn3"} {
		checkAdmin(t, sn1, 0, []string{"SUCCEEDED"}, "plan", "deploy-admin", "-sn", sn, "-wait")
	}
	out = checkAdmin(t, sn1, 0, []string{"RUNNING,MASTER (leader, term"}, "show", "admins")
	if strings.Count(out, "RUNNING,REPLICA") != 2 {
		t.Errorf("show admins with all three up:\n%s", out)
	}
	nodes[2].stop()
	out = checkAdmin(t, sn1, 0, []string{"admin on sn3 " + nodes[2].addr() + "  UNREACHABLE"}, "show", "admins")
	if strings.Count(out, "RUNNING,") != 2 {
		t.Errorf("show admins with sn3 down:\n%s", out)
	}
	checkAdmin(t, sn1, 1, []string{"writable-degraded: 2 read-only: 0 offline: 0", "Admin Status: writable-degraded", "Storage Node [sn3]"}, "ping")
	nodes[2].start(t)
	awaitAdmin(t, sn1, []string{"healthy: 2", "Admin Status: healthy"}, "ping")

	// A full restart: until the shards elect leaders, verify says an
	// election is in progress, never that reachable nodes do not answer.
	for _, sn := range nodes {
		sn.stop()
	}
	for _, sn := range nodes {
		sn.start(t)
	}
	bad := ""
	waitFor(t, 60*time.Second, "verify configuration to pass after a full restart", func() bool {
		code, out, _ := admin(t, sn1, "verify", "configuration")
		if strings.Contains(out, "3 storage nodes, 3 reachable") {
			for _, m := range noLeaderRE.FindAllStringSubmatch(out, -1) {
				if strings.Contains(m[2], "answer") || !strings.Contains(m[2], "an election is in progress") {
					bad = out
				}
			}
		}
		return code == 0
	})
	if bad != "" {
		t.Errorf("verify configuration with every node answering:\n%s", bad)
	}
}

// TestAdminTopologyOverDeployedStore: a candidate that matches the
// deployed layout deploys as a no-op; one with another partition count is
// refused with the count to use.
func TestAdminTopologyOverDeployedStore(t *testing.T) {
	nodes := initNodes(t, 3)
	for _, sn := range nodes {
		sn.start(t)
	}
	before, deploy, after := whitePaperScript(t, nodes)
	// A candidate with another partition count, made before the first deploy.
	before = append(before, "topology create -name Early -pool MyPool -partitions 60")
	if code, out, errOut := admin(t, nodes[0], "-script", writeScript(t, slices.Concat(before, deploy, after))); code != 0 {
		t.Fatalf("deploy script: exit %d\n%s\n%s", code, out, errOut)
	}
	sn1 := nodes[0]
	fixed := "the number of partitions is fixed when the store is first deployed (deployed: 100), so create the candidate with -partitions 100"

	checkAdmin(t, sn1, 0, []string{"Created: Same"}, "topology", "create", "-name", "Same", "-pool", "MyPool", "-partitions", "100")
	checkAdmin(t, sn1, 0, []string{"Topology Same matches the deployed topology (MyStoreLayout, sequence 1): no changes"}, "topology", "preview", "-name", "Same")
	checkAdmin(t, sn1, 0, []string{"nothing to deploy"}, "plan", "deploy-topology", "-name", "Same", "-wait")
	// A bad value is bad input whatever there is to deploy, checked first.
	checkAdmin(t, sn1, 2, []string{`plan deploy-topology: -move-share wants an integer from 1 to 100, not "500"`}, "plan", "deploy-topology", "-name", "Same", "-move-share", "500", "-wait")
	checkAdmin(t, sn1, 2, []string{`-move-share wants an integer from 1 to 100, not "0"`}, "plan", "deploy-topology", "-name", "Nowhere", "-move-share", "0")
	checkAdmin(t, sn1, 0, []string{`"nothing_to_do": true`}, "-json", "plan", "deploy-topology", "-name", "MyStoreLayout", "-wait")
	checkAdmin(t, sn1, 0, []string{"sequence=1"}, "show", "topology")

	checkAdmin(t, sn1, 2, []string{"-partitions 50: " + fixed}, "topology", "create", "-name", "P50", "-pool", "MyPool", "-partitions", "50")
	checkAdmin(t, sn1, 2, []string{"no topology candidate P50"}, "topology", "view", "-name", "P50")
	checkAdmin(t, sn1, 1, []string{"topology Early has 60 partitions and cannot be deployed: " + fixed}, "topology", "preview", "-name", "Early")
	checkAdmin(t, sn1, 1, []string{"topology Early has 60 partitions and cannot be deployed: " + fixed}, "plan", "deploy-topology", "-name", "Early", "-wait")
	out := checkAdmin(t, sn1, 0, nil, "show", "plans")
	if strings.Count(out, "deploy-topology") != 1 {
		t.Errorf("show plans lists more than the first deploy-topology:\n%s", out)
	}
}
