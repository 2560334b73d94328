package admin

import (
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// admins describes nodes that answer; those in withAdmin host an admin
// replica.
func admins(answer []uint64, withAdmin ...uint64) map[uint64]*controlpb.NodeInfo {
	out := map[uint64]*controlpb.NodeInfo{}
	for _, id := range answer {
		out[id] = &controlpb.NodeInfo{SnId: id}
	}
	for _, id := range withAdmin {
		out[id].Admin = true
	}
	return out
}

func TestCheckAdminRemoval(t *testing.T) {
	three := []uint64{1, 2, 3}
	all := admins(three, 1, 2, 3)
	noSN3 := admins([]uint64{1, 2}, 1, 2)
	sn3NoAdmin := admins(three, 1, 2)
	for _, tc := range []struct {
		name   string
		target uint64
		self   uint64 // the admin leader asking
		voters []uint64
		infos  map[uint64]*controlpb.NodeInfo
		force  bool
		want   []string // substrings of the error; nil: allowed
	}{
		{name: "all running: the leader may go", target: 1, self: 1, voters: three, infos: all},
		{name: "all running: a follower may go", target: 2, self: 1, voters: three, infos: all},
		{name: "two admins: one may go", target: 2, self: 1, voters: []uint64{1, 2}, infos: all},
		{name: "the last admin never goes", target: 1, self: 1, voters: []uint64{1}, infos: all,
			want: []string{"the admin on sn1 is the store's only admin", "plan deploy-admin -sn SN -wait"}},
		{name: "the last admin never goes, even forced", target: 1, self: 1, voters: []uint64{1}, infos: all, force: true,
			want: []string{"only admin"}},
		{name: "another admin's node is down", target: 2, self: 1, voters: three, infos: noSN3,
			want: []string{"removing the admin on sn2 would leave 2 admins (sn1, sn3) of which 1 runs, fewer than the 2 they need",
				"down: admin on sn3 (its node sn3 does not answer)", "start sn3 with cairn sn start --root DIR",
				"plan remove-admin -admin sn3", "add -force"}},
		{name: "the leader itself, another down", target: 1, self: 1, voters: three, infos: noSN3,
			want: []string{"would leave 2 admins (sn2, sn3) of which 1 runs"}},
		{name: "another node answers without an admin", target: 2, self: 1, voters: three, infos: sn3NoAdmin,
			want: []string{"admin on sn3 (sn3 answers but runs no admin replica)", "restart sn3"}},
		{name: "forced past the majority rule", target: 2, self: 1, voters: three, infos: noSN3, force: true},
		{name: "the down admin itself may go", target: 3, self: 1, voters: three, infos: noSN3},
		{name: "five admins, one down: one more may go", target: 2, self: 1, voters: []uint64{1, 2, 3, 4, 5},
			infos: admins([]uint64{1, 2, 3, 4}, 1, 2, 3, 4)},
		{name: "five admins, two down: none running may go", target: 2, self: 1, voters: []uint64{1, 2, 3, 4, 5},
			infos: admins([]uint64{1, 2, 3}, 1, 2, 3),
			want:  []string{"would leave 4 admins (sn1, sn3, sn4, sn5) of which 2 runs, fewer than the 3", "admin on sn4", "admin on sn5"}},
		{name: "a learner is not counted", target: 4, self: 1, voters: three, infos: noSN3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkAdminRemoval(tc.target, tc.self, tc.voters, tc.infos, tc.force)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if status.Code(err) != codes.FailedPrecondition {
				t.Fatalf("got %v, want FailedPrecondition (a refusal: exit 1)", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(status.Convert(err).Message(), w) {
					t.Errorf("error lacks %q:\n%s", w, status.Convert(err).Message())
				}
			}
		})
	}
}

func TestRemovalKind(t *testing.T) {
	voters := []uint64{1, 2}
	members := []uint64{1, 2, 4} // sn4 is a learner
	infos := admins([]uint64{1, 2, 3, 5}, 1, 2, 5)
	for _, tc := range []struct {
		id      uint64
		cleanup []uint64
		member  bool
		unknown bool
	}{
		{id: 1, member: true},
		{id: 4, member: true},
		{id: 5},                       // removed while down, reports an admin
		{id: 6, cleanup: []uint64{6}}, // removed while down, still down
		{id: 3, unknown: true},        // answers, hosts no admin
		{id: 9, unknown: true},
	} {
		member, err := removalKind(tc.id, members, voters, tc.cleanup, infos)
		switch {
		case tc.unknown && (status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "there is no admin on "+snName(tc.id)+"; the admins are on sn1, sn2")):
			t.Errorf("sn%d: %v, want the list of admins", tc.id, err)
		case !tc.unknown && (err != nil || member != tc.member):
			t.Errorf("sn%d: member %v, %v; want member %v", tc.id, member, err, tc.member)
		}
	}
}
