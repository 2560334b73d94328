package client_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/semcases"
)

// casesFile is the semantics table every language runs (its comment says
// how to read it).
const casesFile = "../api/testdata/cases.json"

// TestSharedCases runs the semantics table through the Go client against a
// real lite node.
func TestSharedCases(t *testing.T) {
	c := startLite(t)
	info, err := c.StoreInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cases, err := semcases.Load(filepath.FromSlash(casesFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, sc := range cases {
		t.Run(sc.Name, func(t *testing.T) {
			r := &caseRunner{t: t, c: c, tag: fmt.Sprintf("go%d_", i), versions: map[string]client.Version{},
				maxValue: info.Limits.MaxValueBytes}
			for j, st := range sc.Steps {
				r.step = j
				r.run(st)
			}
		})
	}
}

type caseRunner struct {
	t        *testing.T
	c        *client.Client
	tag      string
	step     int
	versions map[string]client.Version
	maxValue int64
}

func (r *caseRunner) tagged(s string) string { return semcases.Tagged(r.tag, s) }

func (r *caseRunner) fail(st semcases.Step, format string, args ...any) {
	r.t.Helper()
	r.t.Errorf("step %d (%s %s%s): %s", r.step, st.Op, st.Key, st.Parent, fmt.Sprintf(format, args...))
}

func (r *caseRunner) run(st semcases.Step) {
	r.t.Helper()
	var err error
	switch st.Op {
	case "put":
		err = r.put(st)
	case "get":
		err = r.get(st)
	case "delete":
		err = r.delete(st)
	case "multi_get":
		err = r.multiGet(st)
	case "multi_delete":
		err = r.multiDelete(st)
	case "execute":
		err = r.execute(st)
	default:
		r.t.Fatalf("step %d: unknown op %q", r.step, st.Op)
	}
	r.checkErr(st, err)
}

// checkErr compares an operation's error with the expected error kind.
func (r *caseRunner) checkErr(st semcases.Step, err error) {
	r.t.Helper()
	var ce *client.Error
	switch {
	case st.Expect.Error == "" && err != nil:
		r.fail(st, "unexpected error: %v", err)
	case st.Expect.Error != "" && err == nil:
		r.fail(st, "succeeded, want error %s", st.Expect.Error)
	case st.Expect.Error != "" && !errors.As(err, &ce):
		r.fail(st, "error %v is not a typed *client.Error", err)
	case st.Expect.Error != "" && ce.Kind != st.Expect.Error:
		r.fail(st, "error kind %q (%v), want %q", ce.Kind, err, st.Expect.Error)
	}
}

func (r *caseRunner) key(s string) (client.Key, error) { return client.ParseKey(r.tagged(s)) }

func (r *caseRunner) value(st semcases.Step) []byte {
	v, err := semcases.ValueOf(st, r.maxValue)
	if err != nil {
		r.t.Fatalf("step %d: %v", r.step, err)
	}
	return v
}

func (r *caseRunner) match(st semcases.Step) client.Version {
	v, ok := r.versions[st.Version]
	if !ok {
		r.t.Fatalf("step %d: version %q was not saved", r.step, st.Version)
	}
	return v
}

func (r *caseRunner) op(st semcases.Step) (client.Op, error) {
	k, err := r.key(st.Key)
	if err != nil {
		return client.Op{}, err
	}
	var o client.Op
	switch {
	case st.Op == "put" && st.If == "":
		o = client.OpPut(k, r.value(st))
	case st.Op == "put" && st.If == "absent":
		o = client.OpPutIfAbsent(k, r.value(st))
	case st.Op == "put" && st.If == "present":
		o = client.OpPutIfPresent(k, r.value(st))
	case st.Op == "put" && st.If == "version":
		o = client.OpPutIfVersion(k, r.value(st), r.match(st))
	case st.Op == "delete" && st.If == "":
		o = client.OpDelete(k)
	case st.Op == "delete" && st.If == "version":
		o = client.OpDeleteIfVersion(k, r.match(st))
	default:
		r.t.Fatalf("step %d: no operation %s if=%q", r.step, st.Op, st.If)
	}
	if st.Abort {
		o = o.AbortIfUnsuccessful()
	}
	return o, nil
}

func (r *caseRunner) put(st semcases.Step) error {
	k, err := r.key(st.Key)
	if err != nil {
		return err
	}
	ctx := context.Background()
	var res client.Result
	switch st.If {
	case "":
		res.Version, err = r.c.Put(ctx, k, r.value(st))
		res.Done = err == nil
	case "absent":
		res, err = r.c.PutIfAbsent(ctx, k, r.value(st))
	case "present":
		res, err = r.c.PutIfPresent(ctx, k, r.value(st))
	case "version":
		res, err = r.c.PutIfVersion(ctx, k, r.value(st), r.match(st))
	}
	if err != nil {
		return err
	}
	r.checkDone(st, res)
	return nil
}

func (r *caseRunner) delete(st semcases.Step) error {
	k, err := r.key(st.Key)
	if err != nil {
		return err
	}
	var res client.Result
	if st.If == "version" {
		res, err = r.c.DeleteIfVersion(context.Background(), k, r.match(st))
	} else {
		res, err = r.c.Delete(context.Background(), k)
	}
	if err != nil {
		return err
	}
	r.checkDone(st, res)
	return nil
}

// checkDone checks a write's done flag and saves its version.
func (r *caseRunner) checkDone(st semcases.Step, res client.Result) {
	r.t.Helper()
	want, err := st.Expect.DoneBool()
	if err != nil {
		r.t.Fatalf("step %d: expect.done: %v", r.step, err)
	}
	if res.Done != want {
		r.fail(st, "done = %v, want %v", res.Done, want)
	}
	if st.Save != "" {
		r.versions[st.Save] = res.Version
	}
}

func (r *caseRunner) get(st semcases.Step) error {
	k, err := r.key(st.Key)
	if err != nil {
		return err
	}
	rec, found, err := r.c.Get(context.Background(), k)
	if err != nil {
		return err
	}
	switch {
	case st.Expect.Missing && found:
		r.fail(st, "found %q, want missing", rec.Value)
	case !st.Expect.Missing && !found:
		r.fail(st, "missing")
	case st.Expect.Value != nil && string(rec.Value) != *st.Expect.Value:
		r.fail(st, "value %q, want %q", rec.Value, *st.Expect.Value)
	case st.Expect.Version != "" && !slices.Equal(rec.Version, r.match(semcases.Step{Version: st.Expect.Version})):
		r.fail(st, "version %v, want the version saved as %s", rec.Version, st.Expect.Version)
	}
	return nil
}

func (r *caseRunner) selection(st semcases.Step) (client.Key, *client.KeyRange, client.Depth, error) {
	parent, err := r.key(st.Parent)
	if err != nil {
		return parent, nil, 0, err
	}
	depth := map[string]client.Depth{"": 0, "children_only": client.ChildrenOnly, "parent_and_children": client.ParentAndChildren,
		"descendants_only": client.DescendantsOnly, "parent_and_descendants": client.ParentAndDescendants}
	d, ok := depth[st.Depth]
	if !ok {
		r.t.Fatalf("step %d: unknown depth %q", r.step, st.Depth)
	}
	return parent, r.keyRange(st.Range), d, nil
}

func (r *caseRunner) keyRange(sr *semcases.Range) *client.KeyRange {
	switch {
	case sr == nil:
		return nil
	case sr.Prefix != nil:
		return client.Prefix(*sr.Prefix)
	case sr.Start != nil && sr.End != nil:
		return client.Between(*sr.Start, !sr.StartExclusive, *sr.End, !sr.EndExclusive)
	case sr.Start != nil:
		return client.From(*sr.Start, !sr.StartExclusive)
	case sr.End != nil:
		return client.To(*sr.End, !sr.EndExclusive)
	}
	return nil
}

func (r *caseRunner) multiGet(st semcases.Step) error {
	parent, kr, d, err := r.selection(st)
	if err != nil {
		return err
	}
	recs, err := r.c.MultiGet(context.Background(), parent, kr, d)
	if err != nil {
		return err
	}
	var gotKeys, gotValues []string
	for _, rec := range recs {
		gotKeys = append(gotKeys, rec.Key.String())
		gotValues = append(gotValues, string(rec.Value))
	}
	wantKeys := make([]string, len(st.Expect.Keys))
	for i, k := range st.Expect.Keys {
		wantKeys[i] = r.tagged(k)
	}
	if !slices.Equal(gotKeys, wantKeys) {
		r.fail(st, "keys %q, want %q", gotKeys, wantKeys)
	}
	if st.Expect.Values != nil && !slices.Equal(gotValues, st.Expect.Values) {
		r.fail(st, "values %q, want %q", gotValues, st.Expect.Values)
	}
	return nil
}

func (r *caseRunner) multiDelete(st semcases.Step) error {
	parent, kr, d, err := r.selection(st)
	if err != nil {
		return err
	}
	n, err := r.c.MultiDelete(context.Background(), parent, kr, d)
	if err != nil {
		return err
	}
	if st.Expect.Deleted != nil && n != *st.Expect.Deleted {
		r.fail(st, "deleted %d, want %d", n, *st.Expect.Deleted)
	}
	return nil
}

func (r *caseRunner) execute(st semcases.Step) error {
	ops := make([]client.Op, len(st.Ops))
	for i, os := range st.Ops {
		o, err := r.op(os)
		if err != nil {
			return err
		}
		ops[i] = o
	}
	res, err := r.c.Execute(context.Background(), ops)
	var ee *client.ExecutionError
	if errors.As(err, &ee) {
		if st.Expect.AbortedAt == nil {
			r.fail(st, "aborted at %d, want done %s", ee.Index, st.Expect.Done)
		} else if ee.Index != *st.Expect.AbortedAt {
			r.fail(st, "aborted at %d, want aborted at %d", ee.Index, *st.Expect.AbortedAt)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if st.Expect.AbortedAt != nil {
		r.fail(st, "done, want aborted at %d", *st.Expect.AbortedAt)
		return nil
	}
	want, err := st.Expect.DoneList()
	if err != nil {
		r.t.Fatalf("step %d: expect.done: %v", r.step, err)
	}
	got := make([]bool, len(res))
	for i, x := range res {
		got[i] = x.Done
	}
	if !slices.Equal(got, want) {
		r.fail(st, "done %v, want %v", got, want)
	}
	return nil
}
