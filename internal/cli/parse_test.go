package cli

import (
	"errors"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
)

func isUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}

func TestParseDurability(t *testing.T) {
	for _, tc := range []struct {
		durability, ack string
		want            client.Durability
		ok              bool
	}{
		{"", "", client.Durability{}, true},
		{"sync", "", client.Durability{MasterSync: client.Sync}, true},
		{"write_no_sync", "all", client.Durability{MasterSync: client.WriteNoSync, ReplicaAck: client.AckAll}, true},
		{"NO-SYNC", "simple-majority", client.Durability{MasterSync: client.NoSync, ReplicaAck: client.AckSimpleMajority}, true},
		{"sync,no_sync", "none", client.Durability{MasterSync: client.Sync, ReplicaSync: client.NoSync, ReplicaAck: client.AckNone}, true},
		{"", "majority", client.Durability{ReplicaAck: client.AckSimpleMajority}, true},
		{"fsync", "", client.Durability{}, false},
		{"sync,", "", client.Durability{}, false},
		{"sync,sync,sync", "", client.Durability{}, false},
		{"", "some", client.Durability{}, false},
	} {
		got, err := ParseDurability(tc.durability, tc.ack)
		if tc.ok != (err == nil) || (tc.ok && got != tc.want) {
			t.Errorf("ParseDurability(%q, %q) = %v, %v; want %v ok=%v", tc.durability, tc.ack, got, err, tc.want, tc.ok)
		}
		if err != nil && !isUsage(err) {
			t.Errorf("ParseDurability(%q, %q): %v is not a usage error", tc.durability, tc.ack, err)
		}
	}
}

// TestParseDurabilityAckHint: an ack policy given as REPLICA is pointed to
// --ack.
func TestParseDurabilityAckHint(t *testing.T) {
	_, err := ParseDurability("sync,all", "")
	want := `--durability: "all" is not a sync policy (want sync, write_no_sync or no_sync); all is an ack policy: give it with --ack all`
	if err == nil || err.Error() != want {
		t.Errorf("ParseDurability(sync,all) = %v\nwant %s", err, want)
	}
}

func TestParseConsistency(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // Consistency.String(); "" = error
	}{
		{"", "DEFAULT"},
		{"absolute", "ABSOLUTE"},
		{"ABSOLUTE", "ABSOLUTE"},
		{"none_required", "NONE_REQUIRED"},
		{"none-required", "NONE_REQUIRED"},
		{"time_lag=2s", client.TimeLag(2*time.Second, 0).String()},
		{"time_lag=0s", client.TimeLag(0, 0).String()},
		{"version=00ff", client.AtVersion(client.Version{0, 0xff}, 0).String()},
		{"time_lag", ""},
		{"time_lag=", ""},
		{"time_lag=-1s", ""},
		{"time_lag=soon", ""},
		{"version=", ""},
		{"version=xyz", ""},
		{"absolute=1", ""},
		{"=", ""},
		{"eventual", ""},
	} {
		got, err := ParseConsistency(tc.in)
		switch {
		case tc.want == "" && (err == nil || !isUsage(err)):
			t.Errorf("ParseConsistency(%q) = %v, %v; want a usage error", tc.in, got, err)
		case tc.want != "" && (err != nil || got.String() != tc.want):
			t.Errorf("ParseConsistency(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestParseDepth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want client.Depth
		ok   bool
	}{
		{"", 0, true},
		{"children_only", client.ChildrenOnly, true},
		{"parent-and-children", client.ParentAndChildren, true},
		{"DESCENDANTS_ONLY", client.DescendantsOnly, true},
		{"parent_and_descendants", client.ParentAndDescendants, true},
		{"children", 0, false},
		{"1", 0, false},
	} {
		got, err := ParseDepth(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseDepth(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestRangeFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    RangeFlags
		want string // KeyRange.String(); "" = usage error
	}{
		{"none", RangeFlags{}, "(all)"},
		{"start", RangeFlags{Start: "a", HasStart: true}, `["a", +inf)`},
		{"start exclusive", RangeFlags{Start: "a", HasStart: true, StartExclusive: true}, `("a", +inf)`},
		{"end", RangeFlags{End: "m", HasEnd: true}, `(-inf, "m"]`},
		{"end exclusive", RangeFlags{End: "m", HasEnd: true, EndExclusive: true}, `(-inf, "m")`},
		{"between", RangeFlags{Start: "a", HasStart: true, End: "m", HasEnd: true, EndExclusive: true}, `["a", "m")`},
		{"empty start is a bound", RangeFlags{HasStart: true, StartExclusive: true}, `("", +inf)`},
		{"equal bounds", RangeFlags{Start: "a", HasStart: true, End: "a", HasEnd: true}, `["a", "a"]`},
		{"prefix", RangeFlags{Prefix: "ab", HasPrefix: true}, `prefix "ab"`},
		{"prefix and start", RangeFlags{Prefix: "ab", HasPrefix: true, HasStart: true}, ""},
		{"prefix and end", RangeFlags{Prefix: "ab", HasPrefix: true, HasEnd: true}, ""},
		{"start after end", RangeFlags{Start: "z", HasStart: true, End: "a", HasEnd: true}, ""},
		{"exclusive without start", RangeFlags{StartExclusive: true}, ""},
		{"exclusive without end", RangeFlags{EndExclusive: true, HasStart: true}, ""},
	} {
		r, err := tc.f.Range()
		switch {
		case tc.want == "" && (err == nil || !isUsage(err)):
			t.Errorf("%s: Range() = %v, %v; want a usage error", tc.name, r, err)
		case tc.want != "" && (err != nil || r.String() != tc.want):
			t.Errorf("%s: Range() = %v, %v; want %s", tc.name, r, err, tc.want)
		}
	}
}

func TestParseParent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" = nil parent; "!" = error
	}{
		{"", ""},
		{"/", ""},
		{"/users", "/users"},
		{"/users/eu", "/users/eu"},
		{"/users/-/x", "!"},
		{"users", "!"},
	} {
		p, err := ParseParent(tc.in)
		switch {
		case tc.want == "!":
			if err == nil || ExitCode(err) != ExitBadInput {
				t.Errorf("ParseParent(%q) = %v, %v; want a bad-input error", tc.in, p, err)
			}
		case err != nil:
			t.Errorf("ParseParent(%q): %v", tc.in, err)
		case tc.want == "" && p != nil, tc.want != "" && (p == nil || p.String() != tc.want):
			t.Errorf("ParseParent(%q) = %v, want %q", tc.in, p, tc.want)
		}
	}
}

func TestGlobalsConfig(t *testing.T) {
	g := DefaultGlobals()
	cfg, err := g.Config()
	if err != nil || len(cfg.Hosts) != 1 || cfg.Hosts[0] != "127.0.0.1:5000" || cfg.Store != "kvstore" || cfg.Timeout != 5*time.Second {
		t.Fatalf("default Config() = %+v, %v", cfg, err)
	}
	g.Hosts = []string{" a:1", "", "b:2 "}
	g.Durability, g.Ack, g.Consistency = "sync", "all", "absolute"
	cfg, err = g.Config()
	if err != nil || len(cfg.Hosts) != 2 || cfg.Hosts[1] != "b:2" || cfg.Durability.MasterSync != client.Sync ||
		cfg.Durability.ReplicaAck != client.AckAll || cfg.Consistency.String() != "ABSOLUTE" {
		t.Fatalf("Config() = %+v, %v", cfg, err)
	}
	for name, mod := range map[string]func(*Globals){
		"no hosts":        func(g *Globals) { g.Hosts = []string{" "} },
		"no store":        func(g *Globals) { g.Store = "" },
		"zero timeout":    func(g *Globals) { g.Timeout = 0 },
		"bad ack":         func(g *Globals) { g.Ack = "two" },
		"bad consistency": func(g *Globals) { g.Consistency = "strong" },
	} {
		g := DefaultGlobals()
		mod(&g)
		if _, err := g.Config(); !isUsage(err) {
			t.Errorf("%s: Config() = %v, want a usage error", name, err)
		}
	}
}
