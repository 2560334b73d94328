package admin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestNotFoundIsUsage: a reference to something that does not exist is
// bad input (exit 2), like a malformed value; a refusal is exit 1.
func TestNotFoundIsUsage(t *testing.T) {
	m, _ := threeNodeMeta(nil)
	var s Service
	if _, err := s.planByArg(m, map[string]string{"id": "999"}); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(err.Error(), "there is no plan 999") {
		t.Errorf("unknown plan: %v", err)
	}
	if _, err := s.snArg(m, "sn9"); status.Code(err) != codes.InvalidArgument {
		t.Errorf("unknown storage node: %v", err)
	}
	if _, err := s.snArg(m, "bogus"); status.Code(err) != codes.InvalidArgument {
		t.Errorf("malformed storage node: %v", err)
	}
	if status.Code(failed("x")) != codes.FailedPrecondition {
		t.Errorf("failed is not FailedPrecondition")
	}
}

// TestServiceDone: start-service of a running replica and stop-service of
// a stopped one have nothing to do.
func TestServiceDone(t *testing.T) {
	run := &controlpb.ShardState{Shard: 1, Running: true}
	stop := &controlpb.ShardState{Shard: 1}
	for _, tc := range []struct {
		name     string
		run      bool
		st       *controlpb.ShardState
		answered bool
		want     bool
	}{
		{"start a running replica", true, run, true, true},
		{"start a stopped replica", true, stop, true, false},
		{"start on a node that does not answer", true, nil, false, false},
		{"stop a stopped replica", false, stop, true, true},
		{"stop a running replica", false, run, true, false},
		{"stop on a node that does not answer", false, nil, false, true},
	} {
		if got := serviceDone(tc.run, tc.st, tc.answered); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPlanCreatedText: with -wait the reply does not tell how to wait.
func TestPlanCreatedText(t *testing.T) {
	p := &Plan{ID: 7, State: Running}
	if got := planCreatedText(p, 0, false); !strings.Contains(got, "To wait for completion, use plan wait -id 7") {
		t.Errorf("without -wait: %q", got)
	}
	for _, waiting := range []int{0, 6} {
		if got := planCreatedText(p, waiting, true); strings.Contains(got, "To wait") || !strings.Contains(got, "plan 7") {
			t.Errorf("with -wait (waiting for %d): %q", waiting, got)
		}
	}
}

// TestTopologyDoc: show topology -json names the sequence topology_seq,
// as ping -json does.
func TestTopologyDoc(t *testing.T) {
	doc, err := topologyDoc(&topology.Topology{Store: "kvstore", Partitions: 10, Seq: 4})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(doc)
	if _, ok := doc["seq"]; ok || string(doc["topology_seq"]) != "4" {
		t.Errorf("%s", b)
	}
}

func TestEventTime(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 53, 16, 359e6, time.FixedZone("CET", 3600))
	if got := at.UTC().Format(eventTime); got != "2026-11-21T11:53:16.359Z" {
		t.Errorf("%s", got)
	}
}
