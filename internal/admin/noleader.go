package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/replica"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Without an admin leader (a majority of the admins down, or the leader
// not answering), the read-only diagnostics below still answer, from this
// admin replica's own copy of the metadata (a NONE_REQUIRED read: it may
// be stale) and from what the storage nodes say of themselves (Describe).
// Their reply starts with a note saying so, and reports problems (exit 1):
// the admin cannot make changes. Every other command needs the leader.
var localCommands = map[string]bool{
	"ping":                 true,
	"verify configuration": true,
	"show topology":        true,
	"show admins":          true,
}

// leaderWait bounds how long a local command waits for a leader to be
// elected, and then to answer a forwarded command, before it falls back.
const leaderWait = 5 * time.Second

// localReadKey marks a context whose handler reads the local metadata.
type localReadKey struct{}

// withLocalRead marks ctx: loadConfigured reads this replica's copy.
func withLocalRead(ctx context.Context) context.Context {
	return context.WithValue(ctx, localReadKey{}, true)
}

// isLocalRead reports whether ctx was marked by withLocalRead.
func isLocalRead(ctx context.Context) bool {
	v, _ := ctx.Value(localReadKey{}).(bool)
	return v
}

// loadStale reads this replica's copy of the metadata, however stale
// (replica.NoneRequired), once the replica holds one.
func (s *metaStore) loadStale(ctx context.Context) (*Meta, []byte, error) {
	if err := s.r.ReadReady(ctx, replica.Consistency{Kind: replica.NoneRequired}); err != nil {
		return nil, nil, err
	}
	return s.loadLocal()
}

// localMeta reads this replica's copy of the metadata (loadStale), unless
// the Service is closed: its caller may then have closed the engine.
func (s *Service) localMeta(ctx context.Context) (*Meta, bool) {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed {
		return nil, false
	}
	m, _, err := s.store.loadStale(ctx)
	return m, err == nil
}

// withoutLeader answers cmd when no admin leader answers: a local command
// from this replica's copy, any other with the no-leader error. lead is
// the leader this replica knows of but could not reach, 0 if none.
// A local command first asks the other admins this replica knows: one
// removed from the admin group while its node was down knows no leader,
// but the others do.
func (s *Service) withoutLeader(ctx context.Context, req *cairnpb.AdminRequest, cmd Command, args map[string]string, lead uint64) (*cairnpb.AdminReply, error) {
	if !localCommands[cmd.Name] {
		return nil, s.noLeaderError(ctx, lead)
	}
	m, ok := s.localMeta(ctx)
	if !ok {
		return nil, s.noLeaderError(ctx, lead)
	}
	if r, err := s.askOtherAdmins(ctx, m, req); err == nil || status.Code(err) != codes.Unavailable {
		return r, err
	}
	note := noLeaderNote(s.cfg.Node, lead, s.silentAdmins(ctx, m))
	r, err := s.runLocal(ctx, cmd, args)
	if err != nil {
		return nil, err
	}
	return addNote(r, note), nil
}

// runLocal runs cmd's handler on this replica's copy of the metadata,
// holding closeMu so that Close waits for it (at most Describe's 2 s).
func (s *Service) runLocal(ctx context.Context, cmd Command, args map[string]string) (*cairnpb.AdminReply, error) {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed {
		return nil, status.Error(codes.Unavailable, "admin: this admin replica was stopped; retry")
	}
	r, err := handlers[cmd.Name](s, withLocalRead(ctx), args)
	return r, asStatus(err)
}

// askOtherAdmins forwards req to each other admin (voter) this replica
// knows, 2 s each; a forwarded command runs only on the leader. It returns
// the first answer that is not Unavailable.
func (s *Service) askOtherAdmins(ctx context.Context, m *Meta, req *cairnpb.AdminRequest) (*cairnpb.AdminReply, error) {
	err := status.Error(codes.Unavailable, "admin: no other admin answered")
	fwd := &cairnpb.AdminRequest{Command: req.GetCommand(), Args: req.GetArgs(), Forwarded: true}
	for _, id := range s.cfg.Replica.Voters() {
		sn := m.sn(id)
		if id == s.cfg.Node || sn == nil {
			continue
		}
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var r *cairnpb.AdminReply
		r, err = cairnpb.NewAdminClient(s.conn(sn.Addr())).Command(fctx, fwd)
		cancel()
		if code := status.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded {
			return r, err
		}
	}
	return nil, status.Error(codes.Unavailable, "admin: no other admin answered")
}

// silentAdmins returns the admins (voters of the admin group, as this
// replica knows them) other than this one whose node does not answer or
// runs no admin replica, in id order.
func (s *Service) silentAdmins(ctx context.Context, m *Meta) []uint64 {
	var sns []SN
	for _, id := range s.cfg.Replica.Voters() {
		if sn := m.sn(id); sn != nil && id != s.cfg.Node {
			sns = append(sns, *sn)
		}
	}
	infos := s.describeSNs(ctx, sns)
	var out []uint64
	for _, id := range s.cfg.Replica.Voters() {
		if !adminRunning(id, s.cfg.Node, infos) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// noLeaderNote is the first line of a local command's reply: why there is
// no leader to ask, and that the metadata shown may be stale.
func noLeaderNote(self, lead uint64, silent []uint64) string {
	why := "no admin leader (every admin answers: an election may be under way)"
	switch {
	case lead != 0 && lead != self:
		why = fmt.Sprintf("the admin leader (admin on %s) does not answer", snName(lead))
	case len(silent) > 0:
		why = fmt.Sprintf("no admin leader (%s on %s %s not answer)", plural(len(silent), "the admin", "admins"), snNames(silent), doOrDoes(len(silent)))
	}
	return fmt.Sprintf("Note: %s: showing this admin's copy of the metadata (admin on %s), which may be stale", why, snName(self))
}

// addNote puts note before r's text and, when r's JSON is an object, under
// its "note" key, and marks r as reporting problems: without a leader the
// admin can make no change.
func addNote(r *cairnpb.AdminReply, note string) *cairnpb.AdminReply {
	r.Text = note + "\n" + r.GetText()
	r.Problems = true
	var doc map[string]json.RawMessage
	if json.Unmarshal(r.GetJson(), &doc) == nil && doc != nil {
		doc["note"], _ = json.Marshal(note)
		if b, err := json.Marshal(doc); err == nil {
			r.Json = b
		}
	}
	return r
}

// noLeaderError is the Unavailable error of a command that needs the
// admin leader when none answers. It names the admins that do not answer
// and what still works.
func (s *Service) noLeaderError(ctx context.Context, lead uint64) error {
	voters := s.cfg.Replica.Voters()
	var silent []uint64
	if m, ok := s.localMeta(ctx); ok {
		silent = s.silentAdmins(ctx, m)
	}
	return status.Error(codes.Unavailable, noLeaderText(s.cfg.Node, lead, len(voters), silent))
}

// noLeaderText words noLeaderError for an admin group of n voters of
// which silent do not answer; self is the node asking.
func noLeaderText(self, lead uint64, n int, silent []uint64) string {
	var b strings.Builder
	switch {
	case lead != 0 && lead != self:
		fmt.Fprintf(&b, "admin: the admin leader (admin on %s) does not answer", snName(lead))
	case len(silent) > 0:
		fmt.Fprintf(&b, "admin: no admin leader is elected: %s on %s %s not answer, and %d of the %d admins must be up to elect one",
			plural(len(silent), "the admin", "the admins"), snNames(silent), doOrDoes(len(silent)), n/2+1, n)
	default:
		fmt.Fprintf(&b, "admin: no admin leader is elected yet, though every admin this one knows of answers (an election is under way); retry in a few seconds")
	}
	switch {
	case lead != 0 && lead != self:
		b.WriteString("; start its node with cairn sn start --root DIR or check the network, then retry")
	case len(silent) > 0:
		fmt.Fprintf(&b, "; start %s with cairn sn start --root DIR or check the network, then retry", itOrThem(len(silent)))
	}
	b.WriteString(". ping, verify configuration, show topology and show admins still answer from this admin's copy of the metadata")
	return b.String()
}

// describeSNs asks the storage nodes sns about themselves, in parallel,
// 2 s each. Nodes that do not answer are missing from the result.
func (s *Service) describeSNs(ctx context.Context, sns []SN) map[uint64]*controlpb.NodeInfo {
	type res struct {
		id   uint64
		info *controlpb.NodeInfo
	}
	ch := make(chan res, len(sns))
	for _, sn := range sns {
		go func() {
			ch <- res{sn.ID, s.describe(ctx, sn.Addr())}
		}()
	}
	out := make(map[uint64]*controlpb.NodeInfo)
	for range sns {
		if r := <-ch; r.info != nil {
			out[r.id] = r.info
		}
	}
	return out
}

// describe asks the storage node at addr about itself, for up to 2 s; nil
// if it does not answer.
func (s *Service) describe(ctx context.Context, addr string) *controlpb.NodeInfo {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := s.control(addr).Describe(dctx, &controlpb.DescribeRequest{})
	if err != nil {
		return nil
	}
	return info
}
