package e2e

// plan remove-admin on a real three-node store with three admins: the
// admin leader's admin goes (the leadership moves first), its node keeps
// serving data and forwards admin commands, a restart does not bring its
// admin back, and plan deploy-admin adds it again. Then an admin whose node
// is down: removing another admin is refused, removing it succeeds with a
// note, and when the node comes back its stale replica wins no election
// until a second plan remove-admin drops it.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
)

// adminJSON is one admin in show admins -json.
type adminJSON struct {
	SN     uint64 `json:"sn"`
	State  string `json:"state"`
	Leader bool   `json:"leader"`
}

// showAdmins runs show admins -json on sn and returns the admins' ids and
// the leader's.
func showAdmins(t *testing.T, sn *storageNode) (ids []uint64, leader uint64) {
	t.Helper()
	code, out, errOut := admin(t, sn, "-json", "show", "admins")
	var as []adminJSON
	if err := json.Unmarshal([]byte(out), &as); code != 0 || err != nil {
		t.Fatalf("show admins -json on %s: exit %d, %v\n%s%s", sn.addr(), code, err, out, errOut)
	}
	for _, a := range as {
		ids = append(ids, a.SN)
		if a.Leader {
			leader = a.SN
		}
	}
	return ids, leader
}

var adminTermRE = regexp.MustCompile(`admin on sn(\d+) .*RUNNING,MASTER \(leader, term (\d+)\)`)

// adminLeaderTerm returns the admin leader and its term as show admins on
// sn prints them.
func adminLeaderTerm(t *testing.T, sn *storageNode) (string, string) {
	t.Helper()
	out := checkAdmin(t, sn, 0, nil, "show", "admins")
	m := adminTermRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("show admins names no leader:\n%s", out)
	}
	return m[1], m[2]
}

func TestAdminRemoveAdmin(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	nodes := deployWhitePaper(t)
	checkAdmin(t, nodes[0], 0, []string{"SUCCEEDED"}, "plan", "deploy-admin", "-sn", "sn2", "-wait")
	checkAdmin(t, nodes[0], 0, []string{"SUCCEEDED"}, "plan", "deploy-admin", "-sn", "sn3", "-wait")
	ids, lead := showAdmins(t, nodes[0])
	if len(ids) != 3 || lead == 0 {
		t.Fatalf("show admins: %v led by sn%d, want 3 admins with a leader", ids, lead)
	}
	victim := nodes[lead-1]
	name := "sn" + strconv.FormatUint(lead, 10)
	checkAdmin(t, victim, 2, []string{"there is no admin on sn7; the admins are on sn1, sn2, sn3"}, "plan", "remove-admin", "-admin", "sn7")

	// Remove the leader's admin, through the leader itself.
	checkAdmin(t, victim, 0, []string{"SUCCEEDED", "remove " + name + " from the admin group"}, "plan", "remove-admin", "-admin", name, "-wait")
	checkRemoved(t, nodes, lead)
	checkAdmin(t, victim, 0, []string{"admin on " + name + " removed (2 admins"}, "show", "events", "-last", "5")
	checkAdmin(t, victim, 0, []string{"2 admins", "0 violations"}, "verify", "configuration")
	checkKV(t, victim, "/removeadmin/k/-/a")

	// A restart does not bring the admin back.
	victim.stop()
	victim.start(t)
	checkRemoved(t, nodes, lead)
	if _, err := os.Stat(filepath.Join(victim.root, "admin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still has ROOT/admin after its admin was removed: %v", name, err)
	}
	checkKV(t, victim, "/removeadmin/k/-/b")

	// plan deploy-admin adds it again.
	checkAdmin(t, victim, 0, []string{"SUCCEEDED"}, "plan", "deploy-admin", "-sn", name, "-wait")
	if ids, _ := showAdmins(t, victim); len(ids) != 3 {
		t.Fatalf("show admins after deploy-admin -sn %s: %v, want 3 admins", name, ids)
	}
	checkAdmin(t, victim, 0, []string{"3 admins", "0 violations, 0 warnings"}, "verify", "configuration")

	removeDownAdmin(t, nodes)
}

// checkRemoved checks, on every node (the removed admin's node forwards),
// that show admins lists two admins without sn gone, one of them leading.
func checkRemoved(t *testing.T, nodes []*storageNode, gone uint64) {
	t.Helper()
	for _, sn := range nodes {
		ids, lead := showAdmins(t, sn)
		if len(ids) != 2 || slices.Contains(ids, gone) || lead == 0 || lead == gone {
			t.Fatalf("show admins on %s: %v led by sn%d; want 2 admins without sn%d, one leading", sn.addr(), ids, lead, gone)
		}
	}
}

// checkKV writes and reads key through node sn alone.
func checkKV(t *testing.T, sn *storageNode, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Open(ctx, client.Config{Hosts: []string{sn.addr()}, Store: "kvstore"})
	if err != nil {
		t.Fatalf("open through %s: %v", sn.addr(), err)
	}
	defer c.Close()
	k := client.MustParseKey(key)
	if _, err := c.Put(ctx, k, []byte("v")); err != nil {
		t.Fatalf("put %s through %s: %v", key, sn.addr(), err)
	}
	// ABSOLUTE: a NONE_REQUIRED read may reach a replica (here the node just
	// restarted) that has not applied the put yet, as R3 allows.
	if rec, found, err := c.Get(ctx, k, client.WithConsistency(client.Absolute)); err != nil || !found || string(rec.Value) != "v" {
		t.Fatalf("get %s through %s: %q %v %v", key, sn.addr(), rec.Value, found, err)
	}
}

// removeDownAdmin kills the node of an admin that does not lead, checks
// the refusal to remove another admin, removes the down one, and restarts
// its node: the stale replica must not disturb the admin group, and a
// second plan drops it.
func removeDownAdmin(t *testing.T, nodes []*storageNode) {
	t.Helper()
	leadName, term := adminLeaderTerm(t, nodes[0])
	lead, _ := strconv.Atoi(leadName)
	down := lead%3 + 1
	third := 6 - lead - down
	dn, other := nodes[down-1], nodes[third-1]
	downName, otherName := "sn"+strconv.Itoa(down), "sn"+strconv.Itoa(third)
	dn.kill()
	checkAdmin(t, other, 1, []string{"removing the admin on " + otherName + " would leave 2 admins",
		"down: admin on " + downName + " (its node " + downName + " does not answer)",
		"plan remove-admin -admin " + downName, "-force"}, "plan", "remove-admin", "-admin", otherName)
	checkAdmin(t, other, 0, []string{"SUCCEEDED", "Note:    " + downName + " did not answer"}, "plan", "remove-admin", "-admin", downName, "-wait")

	dn.start(t)
	// Its replica campaigns with its old configuration: the others refuse
	// it, so the leader and term stay; admin commands on it reach them.
	awaitAdmin(t, other, []string{"admin on " + downName + ": was removed from the admin group but " + downName + " still holds its replica"}, "verify", "configuration")
	if l, tm := adminLeaderTerm(t, dn); l != leadName || tm != term {
		t.Errorf("with the removed admin back: leader sn%s term %s, want sn%s term %s", l, tm, leadName, term)
	}
	checkAdmin(t, dn, 0, []string{"SUCCEEDED", "tell " + downName + " to stop its admin replica"}, "plan", "remove-admin", "-admin", downName, "-wait")
	out := checkAdmin(t, other, 0, []string{"2 admins"}, "verify", "configuration")
	if regexp.MustCompile(`admin-removed|still holds its replica`).MatchString(out) {
		t.Errorf("verify still reports the removed admin's replica:\n%s", out)
	}
	if l, tm := adminLeaderTerm(t, other); l != leadName || tm != term {
		t.Errorf("after the cleanup: leader sn%s term %s, want sn%s term %s", l, tm, leadName, term)
	}
}
