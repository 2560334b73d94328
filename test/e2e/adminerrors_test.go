package e2e

import (
	"strconv"
	"strings"
	"testing"
)

// TestAdminErrorsSayWhatToDo runs the mistakes the issue names against
// real storage nodes: each exits non-zero with a message that says what to
// do.
func TestAdminErrorsSayWhatToDo(t *testing.T) {
	nodes := initNodes(t, 2)
	for _, sn := range nodes {
		sn.start(t)
	}
	dead := strconv.Itoa(freePort(t))
	expect := func(wantCode int, want string, args ...string) {
		t.Helper()
		code, out, errOut := admin(t, nodes[0], args...)
		if code != wantCode || !strings.Contains(out+errOut, want) {
			t.Errorf("cairn admin %s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, want, out, errOut)
		}
	}
	expect(1, "run: configure -name STORE", "show", "topology")
	// A refused name leaves the node as it was: it is configured under the
	// next name, and deploy-sn of it below succeeds.
	expect(2, `store name "my store"`, "configure", "-name", "my store")
	expect(0, "Store configured: kvstore", "configure", "-name", "kvstore")
	expect(1, "already named \"kvstore\"", "configure", "-name", "other")
	expect(2, `unknown command "deploy everything"; type help`, "deploy", "everything")
	expect(2, "unknown option", "plan", "deploy-zone", "-name", "Z", "-rf", "3", "--colour", "red")
	expect(2, "-rf is required", "plan", "deploy-zone", "-name", "Z")
	expect(0, "SUCCEEDED", "plan", "deploy-zone", "-name", "Z", "-rf", "3", "-wait")
	expect(1, "no storage node answers at 127.0.0.1:"+dead, "plan", "deploy-sn", "-znname", "Z", "-host", "127.0.0.1", "-port", dead, "-wait")
	expect(2, "no zone named \"Nowhere\"", "plan", "deploy-sn", "-znname", "Nowhere", "-host", "127.0.0.1", "-port", strconv.Itoa(nodes[1].port))
	expect(2, `plan deploy-sn: -port wants an integer from 1 to 65535, not "99999"`, "plan", "deploy-sn", "-znname", "Z", "-host", "127.0.0.1", "-port", "99999")
	for _, sn := range nodes {
		expect(0, "SUCCEEDED", "plan", "deploy-sn", "--znname", "Z", "--host", "127.0.0.1", "--port", strconv.Itoa(sn.port), "-wait")
	}
	expect(0, "Added pool P", "pool", "create", "-name", "P")
	expect(0, "[sn1]", "pool", "join", "-name", "P", "-sn", "sn1")
	expect(0, "[sn2]", "pool", "join", "-name", "P", "-sn", "2")
	expect(1, "replication factor 3 needs at least 3 storage nodes", "topology", "create", "-name", "T", "-pool", "P", "-partitions", "10")
	expect(2, `topology create: -partitions wants an integer from 1 to 65536, not "99999999999"`, "topology", "create", "-name", "T", "-pool", "P", "-partitions", "99999999999")
	// The same node twice is bad input, refused before the store's state
	// (no topology deployed yet) is looked at.
	expect(2, "-from and -to name the same storage node, sn1", "plan", "migrate-sn", "-from", "sn1", "-to", "1")
	expect(2, "no topology candidate T", "plan", "deploy-topology", "-name", "T", "-wait")
	// sn start --rejoin-as: an id the store does not have is bad input (2),
	// a helper that does not answer is unavailable (3).
	for _, tc := range []struct {
		code       int
		id, helper string
		want       string
	}{
		{2, "sn9", nodes[0].addr(), "cairn: --rejoin-as sn9: store kvstore has no storage node sn9: give the id the lost node had"},
		{2, "snX", nodes[0].addr(), `cairn: --rejoin-as "snX": want the storage node id the lost node had, as sn3 or 3`},
		{2, "sn2", "127.0.0.1", `cairn: --helper-hosts "127.0.0.1": want HOST:PORT`},
		{3, "sn2", "127.0.0.1:" + dead, "cairn: --rejoin-as sn2: admin: no storage node answered: tried 127.0.0.1:" + dead},
	} {
		code, out, errOut := runCairn(t, "sn", "start", "--root", t.TempDir(), "--rejoin-as", tc.id, "--helper-hosts", tc.helper)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("sn start --rejoin-as %s --helper-hosts %s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", tc.id, tc.helper, code, tc.code, tc.want, out, errOut)
		}
	}
	// An unreachable helper, and a wrong store name from a client.
	code, _, errOut := runCairn(t, "admin", "-port", dead, "ping")
	if code != 3 || !strings.Contains(errOut, "Is `cairn sn start` running there") {
		t.Errorf("admin on a dead port: exit %d: %s", code, errOut)
	}
	code, _, errOut = runCairn(t, "kv", "--hosts", "127.0.0.1:"+dead, "get", "/a/-/b")
	if code != 3 || !strings.Contains(errOut, "check --hosts") {
		t.Errorf("kv on a dead port: exit %d: %s", code, errOut)
	}
	code, _, errOut = runCairn(t, "kv", "--hosts", nodes[0].addr(), "get", "/a/-/b")
	if code == 0 || !strings.Contains(errOut, "no topology yet") {
		t.Errorf("kv before a topology is deployed: exit %d: %s", code, errOut)
	}
}
