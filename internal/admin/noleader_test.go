package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
)

// TestLocalCommands: only read-only diagnostics answer without a leader;
// plans and every command that changes metadata need it.
func TestLocalCommands(t *testing.T) {
	for _, name := range []string{"ping", "verify configuration", "show topology", "show admins"} {
		if !localCommands[name] {
			t.Errorf("%s should answer without an admin leader", name)
		}
	}
	for _, c := range Commands {
		if strings.HasPrefix(c.Name, "plan ") || strings.HasPrefix(c.Name, "pool ") || c.Name == "configure" ||
			c.Name == "snapshot create" || c.Name == "snapshot remove" || c.Name == "topology create" {
			if localCommands[c.Name] {
				t.Errorf("%s changes metadata and must need the leader", c.Name)
			}
		}
	}
}

func TestNoLeaderNote(t *testing.T) {
	for _, tc := range []struct {
		lead   uint64
		silent []uint64
		want   string
	}{
		{0, []uint64{2, 3}, "Note: no admin leader (admins on sn2, sn3 do not answer): showing this admin's copy of the metadata (admin on sn1), which may be stale"},
		{0, []uint64{3}, "Note: no admin leader (the admin on sn3 does not answer): "},
		{2, nil, "Note: the admin leader (admin on sn2) does not answer: "},
		{0, nil, "Note: no admin leader (every admin answers: an election may be under way): "},
	} {
		if got := noLeaderNote(1, tc.lead, tc.silent); !strings.HasPrefix(got, tc.want) {
			t.Errorf("noLeaderNote(lead %d, silent %v) = %q, want prefix %q", tc.lead, tc.silent, got, tc.want)
		}
	}
}

func TestNoLeaderText(t *testing.T) {
	got := noLeaderText(1, 0, 3, []uint64{2, 3})
	for _, want := range []string{
		"no admin leader is elected: the admins on sn2, sn3 do not answer, and 2 of the 3 admins must be up to elect one",
		"start them with cairn sn start --root DIR",
		"ping, verify configuration, show topology and show admins still answer",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "connect to another admin") {
		t.Errorf("the generic advice is back:\n%s", got)
	}
	if got := noLeaderText(1, 0, 3, nil); !strings.Contains(got, "election is under way") {
		t.Errorf("every admin answers: %s", got)
	}
	if got := noLeaderText(1, 3, 3, nil); !strings.Contains(got, "the admin leader (admin on sn3) does not answer; start its node") {
		t.Errorf("leader unreachable: %s", got)
	}
}

// TestAddNote: the note heads the text, goes into an object's JSON, and
// makes the reply report problems (exit 1).
func TestAddNote(t *testing.T) {
	r := addNote(&cairnpb.AdminReply{Text: "body", Json: []byte(`{"store":"kvstore"}`)}, "Note: x")
	var doc map[string]string
	if err := json.Unmarshal(r.Json, &doc); err != nil || doc["note"] != "Note: x" || doc["store"] != "kvstore" {
		t.Errorf("JSON %s (%v)", r.Json, err)
	}
	if r.Text != "Note: x\nbody" || !r.Problems {
		t.Errorf("text %q problems %v", r.Text, r.Problems)
	}
	// A list stays a list.
	r = addNote(&cairnpb.AdminReply{Json: []byte(`[{"sn":1}]`)}, "Note: x")
	if string(r.Json) != `[{"sn":1}]` || !r.Problems {
		t.Errorf("list: %s", r.Json)
	}
}

func TestAdminHealth(t *testing.T) {
	withAdmin := map[uint64]*controlpb.NodeInfo{2: {Admin: true}}
	for _, tc := range []struct {
		name       string
		lead, self uint64
		up, n      int
		want       string
	}{
		{"all up", 1, 1, 3, 3, healthy},
		{"one down", 1, 1, 2, 3, writableDegraded},
		{"no leader", 0, 1, 1, 3, readOnly},
		{"leader elsewhere and up", 2, 1, 3, 3, healthy},
		{"leader elsewhere, unreachable", 3, 1, 2, 3, readOnly},
		{"nothing up", 0, 1, 0, 3, offline},
	} {
		if got := adminHealth(tc.lead, tc.self, tc.up, tc.n, withAdmin); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
