package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestAdminWithoutLeaderAnswersFromLocalCopy kills two of three admins'
// nodes: the survivor's ping, verify configuration, show topology and show
// admins answer from its own copy of the metadata, say so on their first
// line, and exit 1; commands that need the leader exit 3 naming the
// admins that do not answer.
func TestAdminWithoutLeaderAnswersFromLocalCopy(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	nodes := deployWhitePaper(t)
	for _, sn := range []string{"sn2", "sn3"} {
		if out := checkAdmin(t, nodes[0], 0, []string{"SUCCEEDED"}, "plan", "deploy-admin", "-sn", sn, "-wait"); strings.Contains(out, "To wait for completion") {
			t.Errorf("-wait still tells how to wait:\n%s", out)
		}
	}
	// While the admin is healthy: a no-op start-service creates no plan,
	// and a reference to a plan that does not exist is bad input (exit 2).
	checkAdmin(t, nodes[0], 0, []string{"rg1-rn1 is already running; nothing to do"}, "plan", "start-service", "-service", "rg1-rn1", "-wait")
	checkAdmin(t, nodes[0], 2, []string{"there is no plan 999"}, "show", "plan", "-id", "999")
	nodes[1].kill()
	nodes[2].kill()
	const note = "Note: no admin leader (admins on sn2, sn3 do not answer): showing this admin's copy of the metadata"
	// Until the survivor notices that the leader is gone, it may still
	// name it; wait for the settled answer.
	deadline := time.Now().Add(time.Minute)
	for {
		code, out, errOut := admin(t, nodes[0], "ping")
		if code == 1 && strings.HasPrefix(out, note) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ping with two admins down: after a minute, exit %d, want 1 with %q first:\n%s%s", code, note, out, errOut)
		}
	}
	for _, c := range []struct {
		want []string
		args []string
	}{
		{[]string{note, "Admin Status: read-only", "Storage Node [sn2]", "UNREACHABLE"}, []string{"ping"}},
		{[]string{note, "Verify: violation admin: no admin leader: 1 of the 3 admins run", "Verification complete: "}, []string{"verify", "configuration"}},
		{[]string{note, "store=kvstore", "shard=[rg1]", "UNREACHABLE"}, []string{"show", "topology"}},
		{[]string{note, "admin on sn1", "admin on sn3", "UNREACHABLE"}, []string{"show", "admins"}},
	} {
		t.Logf("cairn admin %s:\n%s", strings.Join(c.args, " "), checkAdmin(t, nodes[0], 1, c.want, c.args...))
	}

	out := checkAdmin(t, nodes[0], 1, nil, "-json", "ping")
	var ping struct {
		Note        string `json:"note"`
		AdminStatus string `json:"admin_status"`
		Problems    bool   `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &ping); err != nil || !strings.HasPrefix(ping.Note, note) || ping.AdminStatus != "read-only" || !ping.Problems {
		t.Errorf("ping -json: %v: %+v\n%s", err, ping, out)
	}
	// Plans and metadata changes still need the leader.
	want := []string{"no admin leader is elected: the admins on sn2, sn3 do not answer, and 2 of the 3 admins must be up"}
	_, _, errOut := admin(t, nodes[0], "show", "plans")
	t.Logf("cairn admin show plans:\n%s", errOut)
	checkAdmin(t, nodes[0], 3, want, "show", "plans")
	checkAdmin(t, nodes[0], 3, want, "plan", "deploy-zone", "-name", "Z2", "-rf", "1")

	// The web console says the same: ping and verify from the local copy,
	// with the note; the plans and events need the leader and say why.
	code, _, body := webGet(t, nil, "http://"+nodes[0].addr()+"/console/state.json", "", "")
	var st struct {
		Ping struct {
			Data struct {
				Note string `json:"note"`
			} `json:"data"`
		} `json:"ping"`
		Verify, Plans, Events struct {
			Error string `json:"error"`
		}
	}
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
		t.Fatalf("the console without an admin leader: %d %v\n%s", code, err, body)
	}
	if !strings.HasPrefix(st.Ping.Data.Note, note) || st.Verify.Error != "" || !strings.Contains(st.Plans.Error, want[0]) || !strings.Contains(st.Events.Error, want[0]) {
		t.Errorf("the console without an admin leader: %+v", st)
	}
}
