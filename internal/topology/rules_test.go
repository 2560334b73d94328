package topology

import (
	"encoding/json"
	"slices"
	"testing"
)

// buildForCheck returns a topology that passes every rule: 3 shards of 3
// replicas on 3 nodes of capacity 3, 12 partitions, one leader per node.
func buildForCheck(t *testing.T) *Topology {
	t.Helper()
	ns := nodes(3)
	for i := range ns {
		ns[i].Capacity = 3
	}
	topo, err := Build("kvstore", 12, ns, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name       string
		breakIt    func(*Topology)
		violations []string // "rule subject", in order
		warnings   []string
	}{
		{"clean", func(*Topology) {}, nil, nil},
		{"doubled replica", func(t *Topology) { t.Shards[0].Replicas = []NodeID{1, 1, 2} },
			[]string{"distinct-nodes rg1"}, []string{"unused-capacity sn3"}},
		{"unknown node", func(t *Topology) { t.Shards[1].Replicas[2] = 9 },
			[]string{"unknown-node rg2"}, []string{"unused-capacity sn3"}},
		{"preferred outside replicas", func(t *Topology) {
			t.Shards[2].Replicas = []NodeID{1, 2}
			t.Shards[2].Preferred = 3
		}, []string{"preferred-replica rg3"}, []string{"unused-capacity sn3"}},
		{"over capacity", func(t *Topology) { t.Nodes[0].Capacity, t.Nodes[2].Capacity = 2, 4 },
			[]string{"capacity sn1"}, []string{"unused-capacity sn3"}},
		{"unknown shard", func(t *Topology) { t.PartitionShard[11] = 9 },
			[]string{"unknown-shard rg9"}, nil},
		{"uneven partitions", func(t *Topology) { t.PartitionShard[4] = 1 },
			nil, []string{"partition-spread rg1"}},
		{"uneven leaders", func(t *Topology) {
			for i := range t.Shards {
				t.Shards[i].Preferred = 1
			}
		}, nil, []string{"leader-spread sn1"}},
		{"no preferred leader", func(t *Topology) { t.Shards[0].Preferred = 0 },
			nil, []string{"leader-preferred rg1"}},
		{"unused capacity", func(t *Topology) { t.Nodes[1].Capacity = 0; t.Nodes[2].Capacity = 5 },
			nil, []string{"unused-capacity sn3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := buildForCheck(t)
			tc.breakIt(topo)
			r := topo.Check()
			if got := findingKeys(r.Violations); !slices.Equal(got, tc.violations) {
				t.Errorf("violations %q, want %q", got, tc.violations)
			}
			if got := findingKeys(r.Warnings); !slices.Equal(got, tc.warnings) {
				t.Errorf("warnings %q, want %q", got, tc.warnings)
			}
			if r.OK() != (len(tc.violations) == 0) {
				t.Errorf("OK() = %v with violations %v", r.OK(), r.Violations)
			}
			for _, f := range slices.Concat(r.Violations, r.Warnings) {
				if f.Message == "" || f.Message[len(f.Message)-1] != '.' {
					t.Errorf("%s: message %q is not a full sentence", f.Rule, f.Message)
				}
			}
		})
	}
}

func TestCheckMessages(t *testing.T) {
	topo := buildForCheck(t)
	topo.Nodes[2].Capacity = 4
	topo.PartitionShard[4] = 1
	r := topo.Check()
	for _, want := range []Finding{
		{RuleUnusedCapacity, "sn3", "sn3 hosts 3 of its capacity 4 replicas; a new topology could use it."},
		{RulePartitionSpread, "rg1", "rg1 owns 5 partitions and rg2 owns 3, but 12 partitions over 3 shards means 4 each: unless that is meant, topology redistribute evens them out so load spreads evenly."},
	} {
		if !slices.Contains(slices.Concat(r.Violations, r.Warnings), want) {
			t.Errorf("no finding %+v in %+v", want, r)
		}
	}
}

func TestNames(t *testing.T) {
	if NodeName(3) != "sn3" || ShardName(12) != "rg12" {
		t.Errorf("NodeName(3) = %q, ShardName(12) = %q", NodeName(3), ShardName(12))
	}
}

func findingKeys(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+" "+f.Subject)
	}
	return out
}

func TestReportJSON(t *testing.T) {
	for _, tc := range []struct {
		r    Report
		want string
	}{
		{Report{}, `{"violations":[],"warnings":[]}`},
		{Report{Warnings: []Finding{{RuleCapacity, "sn1", "m"}}},
			`{"violations":[],"warnings":[{"rule":"capacity","subject":"sn1","message":"m"}]}`},
	} {
		b, err := json.Marshal(tc.r)
		if err != nil || string(b) != tc.want {
			t.Errorf("json.Marshal(%v) = %s, %v; want %s", tc.r, b, err, tc.want)
		}
	}
}
