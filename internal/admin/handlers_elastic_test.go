package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/topology"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// whitePaper is the white paper's store, deployed: zone MyZone (RF 3),
// sn1-sn3 of capacity 2 in pool MyPool, topology MyStoreLayout (2 shards,
// 100 partitions) deployed at sequence 1; sn4-sn6 (capacity 2) deployed
// but in no pool. ports gives each node's port.
func whitePaper(ports map[uint64]int) func(m *Meta) {
	return func(m *Meta) {
		m.Store, m.NextSN, m.NextZone = "kvstore", 7, 2
		m.Zones = []Zone{{ID: 1, Name: "MyZone", RF: 3, Type: "primary"}}
		for id := uint64(1); id <= 6; id++ {
			m.SNs = append(m.SNs, SN{ID: id, Zone: 1, Host: "127.0.0.1", Port: ports[id], Capacity: 2})
		}
		m.Pools = []Pool{{Name: "MyPool", SNs: []uint64{1, 2, 3}}}
		nodes, zones, err := poolNodes(m, &m.Pools[0])
		if err != nil {
			panic(err)
		}
		t, err := topology.Place(m.Store, 100, nodes, zones)
		if err != nil {
			panic(err)
		}
		m.Candidates = []Candidate{{Name: "MyStoreLayout", Pool: "MyPool", Topology: t}}
		m.Deployed, m.DeployedName = t.Clone(), "MyStoreLayout"
	}
}

// parseLine splits a command line as the shell does: the command's words,
// then -option value pairs (a flag option takes no value).
func parseLine(t *testing.T, line string) (string, map[string]string) {
	t.Helper()
	words := strings.Fields(line)
	cmd, n, ok := Lookup(words)
	if !ok {
		t.Fatalf("no command in %q", line)
	}
	args := map[string]string{}
	for i := n; i < len(words); i++ {
		name := strings.TrimLeft(words[i], "-")
		if a, ok := cmd.Arg(name); ok && a.Kind == Flag {
			args[name] = "true"
			continue
		}
		if i+1 < len(words) {
			args[name] = words[i+1]
			i++
		}
	}
	return cmd.Name, args
}

type step struct {
	line string
	code codes.Code
	want []string // in the reply's text, or the error's message
}

// runSteps runs each step's command on s and checks its outcome. With -v
// it logs a transcript, as an operator's shell would show it.
func runSteps(t *testing.T, s *Service, steps []step) {
	t.Helper()
	for _, st := range steps {
		name, args := parseLine(t, st.line)
		r, err := run(t, s, name, args)
		out := r.GetText()
		if err != nil {
			out = "Error: " + status.Convert(err).Message()
		}
		t.Logf("kv-> %s\n%s", st.line, out)
		if status.Code(err) != st.code {
			t.Errorf("%s: code %v, want %v: %s", st.line, status.Code(err), st.code, out)
			continue
		}
		for _, w := range st.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", st.line, w, out)
			}
		}
	}
}

// TestElasticCommands: the Oracle user's elasticity sequence over the
// white paper's store, on a real admin service: clone the deployed
// topology, grow the pool, redistribute, preview every move with sizes
// from the nodes (unknown where no node answers), and have deploy refuse
// while saying what would change; then contract back, split partitions,
// raise the replication factor, rebalance off a node that left, and the
// refusals that say what to do instead.
func TestElasticCommands(t *testing.T) {
	sizes := map[uint32]int64{}
	for p := range uint32(200) {
		sizes[p] = 12345
	}
	// sn1 knows rg1's sizes only; sn2 and sn3 do not answer, so rg2's are
	// unknown.
	sn1 := serveControl(t, &fakeSizer{partitions: 100, bytes: map[uint64]map[uint32]int64{1: sizes}})
	ports := map[uint64]int{1: sn1, 2: closedPort(t), 3: closedPort(t), 4: closedPort(t), 5: closedPort(t), 6: closedPort(t)}
	s := startService(t, whitePaper(ports))
	runSteps(t, s, []step{
		{"topology clone -current -name Grow", codes.OK, []string{"Created Grow as a copy of the deployed topology (MyStoreLayout, sequence 1): 2 shards, 100 partitions"}},
		{"pool join -name MyPool -sn sn4", codes.OK, nil},
		{"pool join -name MyPool -sn sn5", codes.OK, nil},
		{"pool join -name MyPool -sn sn6", codes.OK, nil},
		{"topology redistribute -name Grow -pool MyPool", codes.OK, []string{"Redistributed Grow: 3 new storage nodes (sn4, sn5, sn6); 2 new shards (rg3, rg4); 50 partitions move"}},
		{"topology preview -name Grow", codes.OK, []string{
			"Topology transformation from the deployed topology (MyStoreLayout, sequence 1) to Grow:\n" +
				"  3 new storage nodes (sn4, sn5, sn6); 2 new shards (rg3, rg4); 50 partitions move; 309 KB on disk to copy (not counting writes still in memory), plus 25 partitions of unknown size (no storage node of rg2 answered)\n" +
				"  add storage node sn4 at 127.0.0.1:",
			"  create shard rg3 with replicas on sn4, sn5, sn6",
			"  move 25 partitions from rg1 to rg3\n  move 25 partitions from rg2 to rg4\nPartition moves (sizes on disk, not counting writes still in memory):\n  partition 25: rg1 -> rg3, 13 KB\n",
			"  partition 49: rg1 -> rg3, 13 KB\n  partition 75: rg2 -> rg4, size unknown\n",
			"  partition 99: rg2 -> rg4, size unknown"}},
		{"plan deploy-topology -name Grow -noexecute", codes.OK, []string{"Created plan"}},
		{"show plan -id 1", codes.OK, []string{"give every shard its partition table", "create the new shards rg3, rg4 (empty)",
			"move partitions 25 (rg1 -> rg3), 75 (rg2 -> rg4)", "move partitions 49 (rg1 -> rg3), 99 (rg2 -> rg4)", "record topology Grow as deployed"}},
		{"plan cancel -id 1", codes.OK, nil},
		{"topology redistribute -name Grow -pool MyPool", codes.FailedPrecondition, []string{
			`cannot redistribute Grow: nothing to redistribute: the partitions are spread evenly already and no new shard fits: zone "MyZone" has no room for a new shard of 3 replicas on distinct storage nodes (spare capacity: sn1 0, sn2 0, sn3 0, sn4 0, sn5 0, sn6 0)`}},
		{"topology move-partition -name Grow -partition 10 -shard rg3", codes.OK, []string{"Moved partition 10 of Grow to rg3: 1 partition moves"}},
		{"topology move-partition -name Grow -partition 10 -shard 3", codes.FailedPrecondition, []string{"cannot move a partition of Grow: partition 10 belongs to rg3 already"}},
		{"topology move-partition -name Grow -partition 100 -shard 3", codes.InvalidArgument, []string{"topology Grow has 100 partitions, 0 to 99; there is no partition 100"}},
		{"topology move-partition -name Grow -partition 1 -shard rg9", codes.InvalidArgument, []string{"topology Grow has no shard rg9; its shards are rg1, rg2, rg3, rg4"}},
		{"topology move-partition -name Grow -partition 1 -shard x", codes.InvalidArgument, []string{`-shard: "x" is not a shard id`}},
		{"topology validate -name Grow", codes.OK, []string{"0 violations, 1 warning.", "warning   rg3: rg3 owns 26 partitions and rg1 owns 24"}},
		{"topology move-partition -name MyStoreLayout -partition 1 -shard rg2", codes.FailedPrecondition, []string{
			"topology MyStoreLayout is the deployed topology and stays as it was deployed: change a copy (topology clone -current -name NEW, then move a partition of the copy)"}},
		{"topology redistribute -name Grow -pool MyPool", codes.OK, []string{"Redistributed Grow: 1 partition moves"}},
		{"pool create -name Small", codes.OK, nil},
		{"pool join -name Small -sn sn1", codes.OK, nil},
		{"pool join -name Small -sn sn2", codes.OK, nil},
		{"pool join -name Small -sn sn3", codes.OK, nil},
		{"topology contract -name Grow -pool Small", codes.OK, []string{"Contracted Grow: ", "50 partitions move; 2 shards removed (rg3, rg4); 3 storage nodes leave the topology (sn4, sn5, sn6)"}},
		{"topology preview -name Grow", codes.OK, []string{"Topology Grow matches the deployed topology (MyStoreLayout, sequence 1): no changes"}},
		{"topology contract -name Grow -pool Small", codes.OK, []string{"Contracted Grow: nothing changes"}},

		{"topology clone -current -name Split", codes.OK, nil},
		{"topology split-partitions -name Split -factor 2", codes.OK, []string{"Split the 100 partitions of Split into 200: partition p is now partitions 2*p to 2*p+1, on p's shard, so no key changes shard"}},
		{"topology preview -name Split", codes.OK, []string{"  partitions split into 200\n  split the 100 partitions into 200: each partition's hash range in two halves; no key changes partition except to one of its halves"}},
		{"plan deploy-topology -name Split -noexecute", codes.OK, []string{"Created plan"}},
		{"show plan -id 2", codes.OK, []string{"split the 100 partitions into 200", "record topology Split as deployed"}},
		{"plan cancel -id 2", codes.OK, nil},
		{"topology split-partitions -name Split -partitions 300", codes.FailedPrecondition, []string{"cannot split the partitions of Split: 200 partitions cannot be split into 300: each partition splits into equal parts, so give a multiple of 200, at least 400"}},
		{"topology split-partitions -name Split -factor 1", codes.InvalidArgument, []string{"-factor 1; each partition splits into at least 2 parts"}},
		{"topology split-partitions -name Split -factor 2 -partitions 400", codes.InvalidArgument, []string{"give -factor or -partitions, not both"}},
		{"topology redistribute -name Split -pool MyPool", codes.OK, []string{"Redistributed Split: 3 new storage nodes (sn4, sn5, sn6); 2 new shards (rg3, rg4); 100 partitions move"}},
		{"topology preview -name Split", codes.OK, []string{"partitions split into 200; 3 new storage nodes", "100 partitions move; 618 KB on disk to copy (not counting writes still in memory), plus 50 partitions of unknown size", "partition 50: rg1 -> rg3, 13 KB", "partition 150: rg2 -> rg4, size unknown"}},

		{"topology clone -current -name RF", codes.OK, nil},
		{"topology change-repfactor -name RF -pool MyPool -zn zn1 -rf 4", codes.OK, []string{"Changed the replication factor of zone zn1 to 4 in RF: 3 new storage nodes (sn4, sn5, sn6); replicas change (rg1 +sn4, rg2 +sn5)"}},
		{"topology change-repfactor -name RF -pool MyPool -zn MyZone -rf 3", codes.FailedPrecondition, []string{`cannot change the replication factor of RF: zone "MyZone" has replication factor 4; it can only grow (lowering it is not supported): give 5 or more`}},
		{"topology change-repfactor -name RF -pool MyPool -zn zn9 -rf 5", codes.InvalidArgument, []string{"there is no zone zn9"}},
		{"topology redistribute -name RF -pool MyPool", codes.FailedPrecondition, []string{"no room for a new shard of 4 replicas on distinct storage nodes (spare capacity: sn1 0, sn2 0, sn3 0, sn4 1, sn5 1, sn6 2)"}},
		{"topology preview -name RF", codes.OK, []string{"replicas change (rg1 +sn4, rg2 +sn5)"}},
		{"plan deploy-topology -name RF -noexecute", codes.OK, []string{"Created plan 3"}},
		{"show plan -id 3", codes.OK, []string{"add a replica of rg1 on sn4: learner, catch up, voter, publish", "add a replica of rg2 on sn5"}},
		{"plan cancel -id 3", codes.OK, nil},

		{"topology clone -current -name Move", codes.OK, nil},
		{"pool create -name Moved", codes.OK, nil},
		{"pool join -name Moved -sn sn1", codes.OK, nil},
		{"pool join -name Moved -sn sn2", codes.OK, nil},
		{"pool join -name Moved -sn sn4", codes.OK, nil},
		{"topology rebalance -name Move -pool Moved", codes.OK, []string{"Rebalanced Move: 1 new storage node (sn4); replicas change (rg1 +sn4 -sn3, rg2 +sn4 -sn3)", "1 storage node leaves the topology (sn3)"}},
		{"topology rebalance -name Move -pool Nope", codes.InvalidArgument, []string{"there is no pool Nope"}},
		{"topology rebalance -name Nope -pool Moved", codes.InvalidArgument, []string{"there is no topology candidate Nope; topology list shows them, topology clone -current -name Nope makes one"}},

		{"topology create -name Bigger -pool MyPool -partitions 200", codes.InvalidArgument, []string{"the number of partitions is fixed when the store is first deployed (deployed: 100), so create the candidate with -partitions 100; for more partitions, split them: topology clone -current -name NAME, then topology split-partitions -name NAME -factor 2"}},
		{"topology create -name Fresh -pool MyPool -partitions 100", codes.OK, nil},
		{"topology preview -name Fresh", codes.FailedPrecondition, []string{"topology Fresh cannot be deployed over the deployed topology MyStoreLayout: shard rg1 has another origin than the deployed rg1, so it is another shard (its record versions would clash): build the new topology from a clone of the deployed one (topology clone -current)"}},
		{"topology split-partitions -name Fresh -factor 2", codes.OK, nil},
		{"topology preview -name Fresh", codes.FailedPrecondition, []string{"topology Fresh has 200 partitions and cannot be deployed: the number of partitions is fixed"}},
		{"topology clone -current -name Grow", codes.FailedPrecondition, []string{"topology Grow already exists"}},
		{"topology clone -from Nope -name X", codes.InvalidArgument, []string{"there is no topology candidate Nope"}},
		{"topology clone -from Split -name Split2", codes.OK, []string{"Created Split2 as a copy of topology Split: 4 shards, 200 partitions"}},
		{"show events", codes.OK, []string{
			"topology Grow created as a copy of the deployed topology (MyStoreLayout, sequence 1)",
			"redistributed topology Grow over pool MyPool: 3 new storage nodes (sn4, sn5, sn6); 2 new shards (rg3, rg4); 50 partitions move",
			"moved partition 10 of topology Grow to rg3: 1 partition moves",
			"split the partitions of topology Split: partitions split into 200",
			"changed the replication factor of zone zn1 to 4 in topology RF over pool MyPool"}},
	})
}

// TestElasticJSON: the commands' JSON carries the change list.
func TestElasticJSON(t *testing.T) {
	ports := map[uint64]int{}
	for id := uint64(1); id <= 6; id++ {
		ports[id] = closedPort(t)
	}
	s := startService(t, whitePaper(ports))
	runSteps(t, s, []step{
		{"topology clone -current -name Grow", codes.OK, nil},
		{"pool join -name MyPool -sn sn4", codes.OK, nil},
		{"pool join -name MyPool -sn sn5", codes.OK, nil},
		{"pool join -name MyPool -sn sn6", codes.OK, nil},
	})
	r, err := run(t, s, "topology redistribute", map[string]string{"name": "Grow", "pool": "MyPool"})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Name    string           `json:"name"`
		Changes topology.Changes `json:"changes"`
	}
	if err := json.Unmarshal(r.GetJson(), &doc); err != nil || doc.Name != "Grow" || len(doc.Changes.Moves) != 50 || len(doc.Changes.NewShards) != 2 {
		t.Errorf("redistribute JSON: %v, %s", err, r.GetJson())
	}
	r, err = run(t, s, "topology preview", map[string]string{"name": "Grow"})
	if err != nil {
		t.Fatal(err)
	}
	var prev struct {
		Moves []moveDoc `json:"moves"`
		Bytes int64     `json:"bytes"`
		Unk   int       `json:"unknown_sizes"`
	}
	if err := json.Unmarshal(r.GetJson(), &prev); err != nil || len(prev.Moves) != 50 || prev.Unk != 50 || prev.Bytes != 0 ||
		prev.Moves[0] != (moveDoc{25, "rg1", "rg3", -1}) {
		t.Errorf("preview JSON (no node answers): %v, %+v", err, prev)
	}
}

// TestCloneCurrentWithNothingDeployed: -current needs a deployed topology.
func TestCloneCurrentWithNothingDeployed(t *testing.T) {
	s := startService(t, func(m *Meta) { m.Store = "kvstore" })
	runSteps(t, s, []step{
		{"topology clone -current -name T", codes.FailedPrecondition, []string{"no topology is deployed yet, so there is nothing current to clone: clone a candidate with -from NAME, or deploy one first"}},
		{"topology clone -name T", codes.InvalidArgument, []string{"give -current or -from"}},
	})
}

// TestElasticUsage: the synopses the shell's help prints.
func TestElasticUsage(t *testing.T) {
	for name, want := range map[string]string{
		"topology clone":            "topology clone -name NAME -current|-from FROM",
		"topology redistribute":     "topology redistribute -name NAME -pool POOL",
		"topology change-repfactor": "topology change-repfactor -name NAME -pool POOL -zn ZN -rf N",
		"topology move-partition":   "topology move-partition -name NAME -partition N -shard SHARD",
		"topology split-partitions": "topology split-partitions -name NAME -factor N|-partitions N",
	} {
		c, _, ok := Lookup(strings.Fields(name))
		if got := c.Usage(); !ok || got != want {
			t.Errorf("%s: usage %q, want %q", name, got, want)
		}
	}
}
