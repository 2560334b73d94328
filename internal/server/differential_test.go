package server_test

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/keys"
	"github.com/cairndb/cairn/test/model"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

var (
	diffSeed = flag.Int64("diff.seed", 0, "seed for the differential tests (0: time-based)")
	diffOps  = flag.Int("diff.ops", 3000, "random operations in TestDifferential (TestDifferentialConcurrent runs a quarter as many per worker)")
)

func diffSeedOrNow(t *testing.T) int64 {
	seed := *diffSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (rerun with -diff.seed=%d)", seed, seed)
	return seed
}

// TestDifferential runs random operations of every kind against a lite node
// over gRPC and against model.Model, comparing every response. Halfway
// through it restarts the node on the same root, in the middle of two paged
// reads, and checks that everything survived.
func TestDifferential(t *testing.T) {
	seed := diffSeedOrNow(t)
	root := t.TempDir()
	n := startLite(t, root)
	t.Cleanup(func() { n.close() })

	d := newDiffer(seed, n.kv, wholeUniverse(), newVersionSet(), func(msg string) { t.Fatal(msg) })
	ops := *diffOps
	for d.step = 1; d.step <= ops; d.step++ {
		if d.step == ops/2 {
			n = d.restart(t, n, root)
		}
		d.randomOp()
	}
	d.step = ops + 1
	d.checkAll("final whole-store scan")
	t.Logf("%d operations, %d records at the end; %s", ops, d.m.Len(), d.counts())
}

// TestDifferentialConcurrent runs several differs at once against one node,
// each on its own major paths with its own model, so the node's group commit
// batches commands of different clients together while every client's
// results stay deterministic. Afterwards the whole store must equal the
// union of the models.
func TestDifferentialConcurrent(t *testing.T) {
	seed := diffSeedOrNow(t)
	n := startLite(t, t.TempDir())
	t.Cleanup(func() { n.close() })

	const workers = 6
	ops := max(*diffOps/4, 1)
	versions := newVersionSet()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	differs := make([]*differ, workers)
	for w := range workers {
		d := newDiffer(seed+int64(w), n.kv, workerUniverse(fmt.Sprintf("w%d", w)), versions, func(msg string) {
			mu.Lock()
			failures = append(failures, msg)
			mu.Unlock()
			runtime.Goexit()
		})
		d.name = fmt.Sprintf("worker %d (seed %d): ", w, seed+int64(w))
		differs[w] = d
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d.step = 1; d.step <= ops; d.step++ {
				d.randomOp()
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d workers failed:\n%s", len(failures), workers, strings.Join(failures, "\n\n"))
	}

	got := readStoreScan(t, n.kv, &cairnpb.StoreScanRequest{})
	total := 0
	for _, d := range differs {
		total += d.m.Len()
	}
	if len(got) != total {
		t.Fatalf("the whole store has %d records, the models together %d", len(got), total)
	}
	for _, d := range differs {
		d.fail = func(msg string) { t.Fatal(msg) }
		d.step = ops + 1
		d.checkAllUnder(got)
	}
	t.Logf("%d workers x %d operations, %d records at the end", workers, ops, total)
}

// readStoreScan reads a whole store scan, following resume tokens.
func readStoreScan(t *testing.T, kv cairnpb.KVClient, req *cairnpb.StoreScanRequest) []*cairnpb.Record {
	t.Helper()
	var out []*cairnpb.Record
	for pages := 0; ; pages++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := kv.StoreScan(ctx, req)
		cancel()
		if err != nil {
			t.Fatalf("store scan %s: %v", prototext.Format(req), err)
		}
		out = append(out, resp.GetRecords()...)
		if len(resp.GetResume()) == 0 {
			return out
		}
		if pages > 100000 {
			t.Fatalf("store scan did not end after %d pages", pages)
		}
		req.Resume = resp.GetResume()
	}
}

// universe is the small key space a differ draws from, so that collisions,
// parents and descendants are frequent.
type universe struct {
	majors      [][]string
	scanParents [][]string // store-scan parents (nil: the whole store)
	wholeStore  bool       // whether this differ owns the whole store
}

// minorAlphabet holds the minor components; "ab" makes prefix ranges and
// component-wise ordering matter, "\x00" exercises the key escaping.
// Components are never empty (an empty one is refused: case 16 of
// invalidOp).
var minorAlphabet = []string{"a", "ab", "b", "a", "b", "\x00", "\x00a"}

// boundAlphabet holds range bounds and prefixes.
var boundAlphabet = []string{"", "\x00", "a", "ab", "b", "c"}

// wholeUniverse is TestDifferential's key space. Major path /a with minor
// path /b and major path /a/b spell the same full path.
func wholeUniverse() universe {
	return universe{
		majors:      [][]string{{"a"}, {"a", "b"}, {"c", "\x00"}},
		scanParents: [][]string{nil, {}, {"a"}, {"a", "b"}, {"c"}, {"c", "\x00"}, {"b"}, {"a", "b", "c"}},
		wholeStore:  true,
	}
}

// workerUniverse is one concurrent worker's key space, disjoint from the
// others'.
func workerUniverse(tag string) universe {
	return universe{
		majors:      [][]string{{tag}, {tag, "b"}, {tag, "\x00"}},
		scanParents: [][]string{{tag}, {tag, "b"}, {tag, "\x00"}, {tag, "c"}},
	}
}

// versionSet holds every version a command has returned, to check that a
// write's version was never returned by an earlier command.
type versionSet struct {
	mu   sync.Mutex
	seen map[string]bool
	list [][]byte
}

func newVersionSet() *versionSet { return &versionSet{seen: make(map[string]bool)} }

// add records a command's new versions and returns the first one an earlier
// command already returned, if any.
func (s *versionSet) add(vs [][]byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vs {
		if s.seen[string(v)] {
			return v
		}
	}
	for _, v := range vs {
		if !s.seen[string(v)] {
			s.seen[string(v)] = true
			s.list = append(s.list, v)
		}
	}
	return nil
}

func (s *versionSet) random(rng *rand.Rand) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.list) == 0 {
		return nil
	}
	return s.list[rng.IntN(len(s.list))]
}

// differ sends random requests to a node and to a model and compares them.
type differ struct {
	name     string // prefix for failure messages
	seed     int64
	rng      *rand.Rand
	kv       cairnpb.KVClient
	m        *model.Model
	u        universe
	versions *versionSet
	history  map[string][][]byte // key string form -> every version it had
	last     []byte              // the newest version this differ saw
	fail     func(msg string)

	step int
	op   string // what the current step does, for failure messages
	ran  map[string]int
}

func newDiffer(seed int64, kv cairnpb.KVClient, u universe, vs *versionSet, fail func(string)) *differ {
	return &differ{
		seed: seed, rng: rand.New(rand.NewPCG(uint64(seed), 0x6361697e)), kv: kv, m: model.New(), u: u,
		versions: vs, history: make(map[string][][]byte), fail: fail, ran: make(map[string]int),
	}
}

func (d *differ) fatalf(format string, args ...any) {
	d.fail(fmt.Sprintf("%sseed %d, op %d: %s\n%s", d.name, d.seed, d.step, d.op, fmt.Sprintf(format, args...)))
}

func (d *differ) begin(kind string, req proto.Message) {
	d.ran[kind]++
	d.op = kind + " " + prototext.MarshalOptions{}.Format(req)
}

func (d *differ) counts() string {
	var s []string
	for k, n := range d.ran {
		s = append(s, fmt.Sprintf("%s:%d", k, n))
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

func rpcCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}

func now() int64 { return time.Now().UnixMilli() }

// restart closes the node in the middle of a paged multi-get and a paged
// store scan, starts it again on root, finishes both reads, and compares the
// whole store.
func (d *differ) restart(t *testing.T, n *liteNode, root string) *liteNode {
	d.op = "restart"
	mg := &cairnpb.MultiGetRequest{Parent: &cairnpb.Key{Major: d.u.majors[0]}, BatchSize: 1, Direction: cairnpb.Direction_DIRECTION_REVERSE}
	ss := &cairnpb.StoreScanRequest{BatchSize: 2}
	mgWant, ssWant := d.m.MultiGet(mg), d.m.StoreScan(ss)
	var mgGot, ssGot []*cairnpb.Record
	c, cancel := rpcCtx()
	mr, err := d.kv.MultiGet(c, mg)
	cancel()
	if err != nil {
		d.fatalf("first page of %s: %v", prototext.Format(mg), err)
	}
	c, cancel = rpcCtx()
	sr, err := d.kv.StoreScan(c, ss)
	cancel()
	if err != nil {
		d.fatalf("first page of %s: %v", prototext.Format(ss), err)
	}
	mgGot, ssGot = mr.GetRecords(), sr.GetRecords()

	if err := n.close(); err != nil {
		d.fatalf("close node: %v", err)
	}
	n = startLite(t, root)
	t.Cleanup(func() { n.close() }) // the caller's cleanup closes it too; Close is idempotent
	d.kv = n.kv
	t.Logf("op %d: restarted the node (%d records in the model)", d.step, d.m.Len())

	if len(mr.GetResume()) > 0 {
		mg.Resume = mr.GetResume()
		mgGot = append(mgGot, d.readMultiGet(mg)...)
	}
	if len(sr.GetResume()) > 0 {
		ss.Resume = sr.GetResume()
		ssGot = append(ssGot, d.readStoreScan(ss)...)
	}
	if err := model.CheckRecords(mgGot, mgWant); err != nil {
		d.fatalf("multi-get paged across the restart: %v", err)
	}
	if err := model.CheckRecordSet(ssGot, ssWant); err != nil {
		d.fatalf("store scan paged across the restart: %v", err)
	}
	d.checkAll("whole-store scan after the restart")
	return n
}

// checkAll compares a whole-store scan with the model.
func (d *differ) checkAll(what string) {
	d.op = what
	req := &cairnpb.StoreScanRequest{}
	if err := model.CheckRecordSet(d.readStoreScan(req), d.m.All()); err != nil {
		d.fatalf("%v", err)
	}
}

// checkAllUnder compares the records of all under this differ's major paths
// with its model.
func (d *differ) checkAllUnder(all []*cairnpb.Record) {
	d.op = "final whole-store scan"
	var mine []*cairnpb.Record
	for _, r := range all {
		for _, mj := range d.u.majors {
			if slices.Equal(r.GetKey().GetMajor(), mj) {
				mine = append(mine, r)
			}
		}
	}
	if err := model.CheckRecordSet(mine, d.m.All()); err != nil {
		d.fatalf("%v", err)
	}
}

// randomOp runs one random operation.
func (d *differ) randomOp() {
	switch w := d.rng.IntN(100); {
	case w < 15:
		d.get()
	case w < 42:
		d.put()
	case w < 51:
		d.delete()
	case w < 69:
		d.execute()
	case w < 71:
		d.multiDelete()
	case w < 86:
		d.multiGet()
	case w < 95:
		d.storeScan()
	default:
		d.invalid()
	}
}

// outcome counts how an operation turned out, for the final log line.
func (d *differ) outcome(what string, ok bool) {
	if ok {
		d.ran[what+":ok"]++
	} else {
		d.ran[what+":no"]++
	}
}

// --- random request parts ---

func (d *differ) pick(ss []string) string { return ss[d.rng.IntN(len(ss))] }

func (d *differ) major() []string { return d.u.majors[d.rng.IntN(len(d.u.majors))] }

// minor returns 0-3 components, mostly 1 or 2.
func (d *differ) minor(maxLen int) []string {
	n := []int{0, 1, 1, 1, 2, 2, 2, 3}[d.rng.IntN(8)]
	n = min(n, maxLen)
	var m []string
	for range n {
		m = append(m, d.pick(minorAlphabet))
	}
	return m
}

func (d *differ) key() *cairnpb.Key { return d.keyIn(d.major()) }

func (d *differ) keyIn(major []string) *cairnpb.Key {
	return &cairnpb.Key{Major: slices.Clone(major), Minor: d.minor(3)}
}

func (d *differ) value() []byte {
	n := d.rng.IntN(8)
	if d.rng.IntN(20) == 0 {
		n = 200 + d.rng.IntN(2000)
	}
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(d.rng.IntN(256))
	}
	return v
}

func (d *differ) depth() cairnpb.Depth { return cairnpb.Depth(d.rng.IntN(5)) }

func (d *differ) returnKind() cairnpb.ReturnValueVersion {
	return cairnpb.ReturnValueVersion(d.rng.IntN(5))
}

// keyRange returns a valid range: none, full, a prefix, or bounds (start <=
// end), sometimes with ignored fields set.
func (d *differ) keyRange() *cairnpb.KeyRange {
	switch n := d.rng.IntN(10); {
	case n < 3:
		return nil
	case n < 4:
		return &cairnpb.KeyRange{Start: d.pick(boundAlphabet), End: d.pick(boundAlphabet)} // bounds unset: full
	case n < 6:
		return &cairnpb.KeyRange{HasPrefix: true, Prefix: d.pick(boundAlphabet)}
	}
	r := &cairnpb.KeyRange{
		HasStart: d.rng.IntN(4) > 0, Start: d.pick(boundAlphabet), StartInclusive: d.rng.IntN(2) == 0,
		HasEnd: d.rng.IntN(4) > 0, End: d.pick(boundAlphabet), EndInclusive: d.rng.IntN(2) == 0,
		Prefix: d.pick(boundAlphabet),
	}
	if r.HasStart && r.HasEnd && r.Start > r.End {
		r.Start, r.End = r.End, r.Start
	}
	return r
}

func (d *differ) header() *cairnpb.RequestHeader {
	switch d.rng.IntN(4) {
	case 0:
		return &cairnpb.RequestHeader{Store: testStore}
	case 1:
		return &cairnpb.RequestHeader{TimeoutMs: 10000}
	}
	return nil
}

func (d *differ) durability() *cairnpb.Durability {
	if d.rng.IntN(2) == 0 {
		return nil
	}
	return &cairnpb.Durability{
		MasterSync:  cairnpb.SyncPolicy(d.rng.IntN(4)),
		ReplicaSync: cairnpb.SyncPolicy(d.rng.IntN(4)),
		ReplicaAck:  cairnpb.ReplicaAckPolicy(d.rng.IntN(4)),
	}
}

func (d *differ) consistency() *cairnpb.Consistency {
	switch d.rng.IntN(6) {
	case 0:
		return &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_ABSOLUTE}
	case 1:
		return &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_NONE_REQUIRED}
	case 2:
		return &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_TIME_LAG, PermissibleLagMs: 1000}
	case 3:
		if d.last != nil {
			return &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_VERSION, Version: d.last, TimeoutMs: 5000}
		}
	}
	return nil
}

// matchVersion returns, for key k, its current version, a version it had
// before, another key's version, or random bytes.
func (d *differ) matchVersion(k *cairnpb.Key) []byte {
	ks := keyOf(k).String()
	switch n := d.rng.IntN(20); {
	case n < 10:
		if r, ok := d.m.Get(keyOf(k)); ok {
			return r.Version
		}
	case n < 14:
		if h := d.history[ks]; len(h) > 0 {
			return h[d.rng.IntN(len(h))]
		}
	case n < 17:
		if v := d.versions.random(d.rng); v != nil {
			return v
		}
	}
	v := make([]byte, 16)
	for i := range v {
		v[i] = byte(d.rng.IntN(256))
	}
	return v
}

// ttl returns 0 mostly, else one to three hours in ms.
func (d *differ) ttl() int64 {
	if d.rng.IntN(5) > 0 {
		return 0
	}
	return int64(time.Hour/time.Millisecond)*(1+d.rng.Int64N(2)) + d.rng.Int64N(1000)
}

func (d *differ) putOp(k *cairnpb.Key) *cairnpb.PutOp {
	op := &cairnpb.PutOp{Key: k, Value: d.value(), Return: d.returnKind(), TtlMs: d.ttl()}
	switch n := d.rng.IntN(10); {
	case n < 4:
	case n < 6:
		op.Condition = cairnpb.Condition_CONDITION_IF_ABSENT
	case n < 8:
		op.Condition = cairnpb.Condition_CONDITION_IF_PRESENT
	default:
		op.Condition = cairnpb.Condition_CONDITION_IF_VERSION
		op.MatchVersion = d.matchVersion(k)
	}
	if op.Condition != cairnpb.Condition_CONDITION_IF_VERSION && d.rng.IntN(10) == 0 {
		op.MatchVersion = []byte("ignored") // only IF_VERSION reads it
	}
	return op
}

func (d *differ) deleteOp(k *cairnpb.Key) *cairnpb.DeleteOp {
	op := &cairnpb.DeleteOp{Key: k, Return: d.returnKind()}
	if d.rng.IntN(5) < 2 {
		op.Condition = cairnpb.Condition_CONDITION_IF_VERSION
		op.MatchVersion = d.matchVersion(k)
	} else if d.rng.IntN(10) == 0 {
		op.MatchVersion = []byte("ignored")
	}
	return op
}

func keyOf(k *cairnpb.Key) keys.Key { return keys.Key{Major: k.GetMajor(), Minor: k.GetMinor()} }

// --- operations ---

func (d *differ) get() {
	req := &cairnpb.GetRequest{Header: d.header(), Key: d.key(), Consistency: d.consistency()}
	d.begin("get", req)
	c, cancel := rpcCtx()
	resp, err := d.kv.Get(c, req)
	cancel()
	if err != nil {
		d.fatalf("get: %v", err)
	}
	want, ok := d.m.Get(keyOf(req.Key))
	if resp.GetFound() != ok {
		d.fatalf("found = %v, model %v (model record %+v)", resp.GetFound(), ok, want)
	}
	if !ok {
		if resp.GetRecord() != nil {
			d.fatalf("not found, but a record came back: %v", resp.GetRecord())
		}
		return
	}
	if err := model.CheckRecord(resp.GetRecord(), want); err != nil {
		d.fatalf("%v", err)
	}
	d.m.Observe(want.Key, resp.GetRecord().GetExpirationMs())
}

func (d *differ) put() {
	req := &cairnpb.PutRequest{Header: d.header(), Op: d.putOp(d.key()), Durability: d.durability()}
	d.begin("put", req)
	clock := model.Clock{Lo: now()}
	c, cancel := rpcCtx()
	resp, err := d.kv.Put(c, req)
	cancel()
	clock.Hi = now()
	if err != nil {
		d.fatalf("put: %v", err)
	}
	want := d.m.Put(req.Op, clock, resp.GetResult().GetNewVersion())
	if err := model.CheckResult(resp.GetResult(), want); err != nil {
		d.fatalf("%v", err)
	}
	d.wrote([]*cairnpb.Key{req.Op.Key}, []*cairnpb.OperationResult{resp.GetResult()})
	d.outcome("put/"+req.Op.GetCondition().String(), want.Success)
}

func (d *differ) delete() {
	req := &cairnpb.DeleteRequest{Header: d.header(), Op: d.deleteOp(d.key()), Durability: d.durability()}
	d.begin("delete", req)
	c, cancel := rpcCtx()
	resp, err := d.kv.Delete(c, req)
	cancel()
	if err != nil {
		d.fatalf("delete: %v", err)
	}
	want := d.m.Delete(req.Op)
	if err := model.CheckResult(resp.GetResult(), want); err != nil {
		d.fatalf("%v", err)
	}
	d.outcome("delete/"+req.Op.GetCondition().String(), want.Success)
}

func (d *differ) execute() {
	major := d.major()
	req := &cairnpb.ExecuteRequest{Header: d.header(), Durability: d.durability()}
	var ks []*cairnpb.Key
	for range 1 + d.rng.IntN(5) {
		k := d.keyIn(major)
		if len(ks) > 0 && d.rng.IntN(3) == 0 {
			k = proto.Clone(ks[d.rng.IntN(len(ks))]).(*cairnpb.Key) // the same key again
		}
		ks = append(ks, k)
		op := &cairnpb.Operation{AbortIfUnsuccessful: d.rng.IntN(10) < 3}
		if d.rng.IntN(3) == 0 {
			op.Op = &cairnpb.Operation_Delete{Delete: d.deleteOp(k)}
		} else {
			op.Op = &cairnpb.Operation_Put{Put: d.putOp(k)}
		}
		req.Ops = append(req.Ops, op)
	}
	d.begin("execute", req)
	clock := model.Clock{Lo: now()}
	c, cancel := rpcCtx()
	resp, err := d.kv.Execute(c, req)
	cancel()
	clock.Hi = now()
	if err != nil {
		d.fatalf("execute: %v", err)
	}
	want := d.m.Execute(req.Ops, clock, func(i int) []byte {
		if i < len(resp.GetResults()) {
			return resp.GetResults()[i].GetNewVersion()
		}
		return nil
	})
	if err := model.CheckExecute(resp, want); err != nil {
		d.fatalf("%v", err)
	}
	if resp.GetCommitted() {
		d.wrote(ks, resp.GetResults())
	}
	d.outcome("execute/committed", want.Committed)
}

// wrote checks that a committed command's new versions are new, and records
// them.
func (d *differ) wrote(ks []*cairnpb.Key, rs []*cairnpb.OperationResult) {
	var vs [][]byte
	for i, r := range rs {
		if v := r.GetNewVersion(); len(v) > 0 {
			vs = append(vs, v)
			s := keyOf(ks[i]).String()
			d.history[s] = append(d.history[s], v)
			d.last = v
		}
	}
	if v := d.versions.add(vs); v != nil {
		d.fatalf("new version %s was already returned by an earlier command", hex.EncodeToString(v))
	}
}

func (d *differ) multiDelete() {
	req := &cairnpb.MultiDeleteRequest{
		Header: d.header(), Parent: &cairnpb.Key{Major: slices.Clone(d.major()), Minor: d.minor(2)},
		Range: d.keyRange(), Depth: d.depth(), Durability: d.durability(),
	}
	d.begin("multiDelete", req)
	c, cancel := rpcCtx()
	resp, err := d.kv.MultiDelete(c, req)
	cancel()
	if err != nil {
		d.fatalf("multiDelete: %v", err)
	}
	want := d.m.MultiDelete(req)
	if resp.GetDeleted() != want {
		d.fatalf("deleted %d, model %d", resp.GetDeleted(), want)
	}
	d.outcome("multiDelete/deleted-any", want > 0)
}

func (d *differ) multiGet() {
	req := &cairnpb.MultiGetRequest{
		Header: d.header(), Parent: &cairnpb.Key{Major: slices.Clone(d.major()), Minor: d.minor(2)},
		Range: d.keyRange(), Depth: d.depth(), Direction: cairnpb.Direction(d.rng.IntN(3)),
		KeysOnly: d.rng.IntN(4) == 0, Consistency: d.consistency(),
	}
	if d.rng.IntN(2) == 0 {
		req.BatchSize = 1 + d.rng.Int32N(3)
	}
	d.begin("multiGet", req)
	want := d.m.MultiGet(req)
	got := d.readMultiGet(req)
	if err := model.CheckRecords(got, want); err != nil {
		d.fatalf("%v", err)
	}
	d.observe(got)
	d.outcome("multiGet/nonempty", len(want) > 0)
}

// readMultiGet reads a multi-get to the end, following resume tokens.
func (d *differ) readMultiGet(req *cairnpb.MultiGetRequest) []*cairnpb.Record {
	var out []*cairnpb.Record
	for pages := 1; ; pages++ {
		c, cancel := rpcCtx()
		resp, err := d.kv.MultiGet(c, req)
		cancel()
		if err != nil {
			d.fatalf("multiGet page %d: %v", pages, err)
		}
		switch b := int(req.GetBatchSize()); {
		case b == 0 && len(resp.GetResume()) > 0:
			d.fatalf("unpaged multiGet returned a resume token")
		case b > 0 && len(resp.GetRecords()) > b:
			d.fatalf("multiGet page %d has %d records, batch_size %d", pages, len(resp.GetRecords()), b)
		}
		out = append(out, resp.GetRecords()...)
		d.ran["pages"]++
		if len(resp.GetResume()) == 0 {
			return out
		}
		if pages > 10000 {
			d.fatalf("multiGet did not end after %d pages", pages)
		}
		req.Resume = resp.GetResume()
	}
}

func (d *differ) storeScan() {
	req := &cairnpb.StoreScanRequest{
		Header: d.header(), Range: d.keyRange(), Depth: d.depth(), KeysOnly: d.rng.IntN(4) == 0,
		Consistency: d.consistency(),
	}
	if p := d.u.scanParents[d.rng.IntN(len(d.u.scanParents))]; p != nil {
		req.Parent = &cairnpb.Key{Major: slices.Clone(p)}
	}
	if d.rng.IntN(2) == 0 {
		req.BatchSize = 1 + d.rng.Int32N(3)
	}
	d.begin("storeScan", req)
	want := d.m.StoreScan(req)
	got := d.readStoreScan(req)
	if err := model.CheckRecordSet(got, want); err != nil {
		d.fatalf("%v", err)
	}
	d.observe(got)
	d.outcome("storeScan/nonempty", len(want) > 0)
}

// readStoreScan reads a store scan to the end, following resume tokens.
func (d *differ) readStoreScan(req *cairnpb.StoreScanRequest) []*cairnpb.Record {
	var out []*cairnpb.Record
	for pages := 1; ; pages++ {
		c, cancel := rpcCtx()
		resp, err := d.kv.StoreScan(c, req)
		cancel()
		if err != nil {
			d.fatalf("storeScan page %d: %v", pages, err)
		}
		b := int(req.GetBatchSize())
		if b == 0 {
			b = 100 // the server's default page
		}
		if len(resp.GetRecords()) > b {
			d.fatalf("storeScan page %d has %d records, batch_size %d", pages, len(resp.GetRecords()), req.GetBatchSize())
		}
		out = append(out, resp.GetRecords()...)
		d.ran["pages"]++
		if len(resp.GetResume()) == 0 {
			return out
		}
		if pages > 10000 {
			d.fatalf("storeScan did not end after %d pages", pages)
		}
		req.Resume = resp.GetResume()
	}
}

func (d *differ) observe(rs []*cairnpb.Record) {
	for _, r := range rs {
		d.m.Observe(keyOf(r.GetKey()), r.GetExpirationMs())
	}
}

// invalid sends a request the server must reject, and checks the status
// code and error kind. The model does not change: later operations check
// that the server did not either.
func (d *differ) invalid() {
	type call struct {
		name string
		req  proto.Message
		send func(context.Context) error
		code codes.Code
		kind string
	}
	k := d.key()
	bad := d.rng.IntN(17)
	var cs call
	put := func(op *cairnpb.PutOp, kind string) call {
		req := &cairnpb.PutRequest{Op: op}
		return call{"put", req, func(c context.Context) error { _, err := d.kv.Put(c, req); return err }, codes.InvalidArgument, kind}
	}
	del := func(op *cairnpb.DeleteOp, kind string) call {
		req := &cairnpb.DeleteRequest{Op: op}
		return call{"delete", req, func(c context.Context) error { _, err := d.kv.Delete(c, req); return err }, codes.InvalidArgument, kind}
	}
	exec := func(ops []*cairnpb.Operation, kind string) call {
		req := &cairnpb.ExecuteRequest{Ops: ops}
		return call{"execute", req, func(c context.Context) error { _, err := d.kv.Execute(c, req); return err }, codes.InvalidArgument, kind}
	}
	mget := func(req *cairnpb.MultiGetRequest, code codes.Code, kind string) call {
		return call{"multiGet", req, func(c context.Context) error { _, err := d.kv.MultiGet(c, req); return err }, code, kind}
	}
	scan := func(req *cairnpb.StoreScanRequest, kind string) call {
		return call{"storeScan", req, func(c context.Context) error { _, err := d.kv.StoreScan(c, req); return err }, codes.InvalidArgument, kind}
	}
	switch bad {
	case 0:
		cs = put(&cairnpb.PutOp{Key: k, Condition: cairnpb.Condition_CONDITION_IF_VERSION, MatchVersion: make([]byte, d.rng.IntN(2)*15)}, "bad_version")
	case 1:
		cs = del(&cairnpb.DeleteOp{Key: k, Condition: cairnpb.Condition(1 + d.rng.IntN(2))}, "invalid_argument") // IF_ABSENT, IF_PRESENT
	case 2:
		other := d.keyIn([]string{"zz"})
		ops := []*cairnpb.Operation{
			{Op: &cairnpb.Operation_Put{Put: d.putOp(k)}},
			{Op: &cairnpb.Operation_Delete{Delete: &cairnpb.DeleteOp{Key: other}}},
		}
		cs = exec(ops, "multiple_major_paths")
	case 3:
		cs = exec(nil, "invalid_argument")
	case 4:
		ops := []*cairnpb.Operation{
			{Op: &cairnpb.Operation_Put{Put: d.putOp(k)}},
			{Op: &cairnpb.Operation_Delete{Delete: &cairnpb.DeleteOp{Key: k, Condition: cairnpb.Condition_CONDITION_IF_PRESENT}}},
		}
		cs = exec(ops, "invalid_argument")
	case 5:
		r := &cairnpb.KeyRange{HasStart: true, Start: "b", HasEnd: true, End: "a"}
		cs = mget(&cairnpb.MultiGetRequest{Parent: &cairnpb.Key{Major: d.major()}, Range: r}, codes.InvalidArgument, "invalid_key")
	case 6:
		r := &cairnpb.KeyRange{HasPrefix: true, Prefix: "a", HasEnd: true, End: "b"}
		req := &cairnpb.MultiDeleteRequest{Parent: &cairnpb.Key{Major: d.major()}, Range: r}
		cs = call{"multiDelete", req, func(c context.Context) error { _, err := d.kv.MultiDelete(c, req); return err }, codes.InvalidArgument, "invalid_key"}
	case 7:
		cs = mget(&cairnpb.MultiGetRequest{Parent: &cairnpb.Key{Major: d.major()}, Direction: cairnpb.Direction_DIRECTION_UNORDERED}, codes.InvalidArgument, "invalid_argument")
	case 8:
		cs = scan(&cairnpb.StoreScanRequest{Parent: &cairnpb.Key{Major: d.major(), Minor: []string{"a"}}}, "invalid_key")
	case 9:
		req := &cairnpb.GetRequest{Key: &cairnpb.Key{Minor: []string{"a"}}}
		cs = call{"get", req, func(c context.Context) error { _, err := d.kv.Get(c, req); return err }, codes.InvalidArgument, "invalid_key"}
	case 10:
		cs = mget(&cairnpb.MultiGetRequest{Parent: &cairnpb.Key{Major: d.major()}, Depth: cairnpb.Depth(9)}, codes.InvalidArgument, "unknown_enum")
	case 11:
		resume := []byte(d.pick([]string{"\x00", "zzz", "q"}))
		if d.rng.IntN(2) == 0 {
			cs = mget(&cairnpb.MultiGetRequest{Parent: &cairnpb.Key{Major: d.major()}, BatchSize: 1, Resume: resume}, codes.InvalidArgument, "bad_resume")
		} else {
			cs = scan(&cairnpb.StoreScanRequest{BatchSize: 1, Resume: resume}, "bad_resume")
		}
	case 12:
		cs = put(&cairnpb.PutOp{Key: k, TtlMs: -1}, "invalid_argument")
	case 13:
		req := &cairnpb.GetRequest{Header: &cairnpb.RequestHeader{Store: "other"}, Key: k}
		cs = call{"get", req, func(c context.Context) error { _, err := d.kv.Get(c, req); return err }, codes.FailedPrecondition, "store_mismatch"}
	case 14:
		v := make([]byte, 16)
		for i := range v {
			v[i] = byte(d.rng.IntN(256))
		}
		cs = mget(&cairnpb.MultiGetRequest{Parent: &cairnpb.Key{Major: d.major()}, Consistency: &cairnpb.Consistency{Kind: cairnpb.ConsistencyKind_CONSISTENCY_KIND_VERSION, Version: v}},
			codes.InvalidArgument, "foreign_version")
	case 15:
		long := make([]string, 65)
		for i := range long {
			long[i] = "x"
		}
		cs = put(&cairnpb.PutOp{Key: &cairnpb.Key{Major: []string{"a"}, Minor: long}}, "limit_exceeded")
	case 16:
		empty := d.keyIn(append(slices.Clone(d.major()), ""))
		if d.rng.IntN(2) == 0 {
			cs = put(&cairnpb.PutOp{Key: empty}, "invalid_key")
		} else {
			cs = mget(&cairnpb.MultiGetRequest{Parent: &cairnpb.Key{Major: d.major(), Minor: []string{""}}}, codes.InvalidArgument, "invalid_key")
		}
	}
	d.begin("invalid "+cs.name, cs.req)
	c, cancel := rpcCtx()
	err := cs.send(c)
	cancel()
	if err := checkStatus(err, cs.code, cs.kind); err != nil {
		d.fatalf("%v", err)
	}
}
