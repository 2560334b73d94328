package client_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
)

var seed = flag.Uint64("seed", 0, "seed for randomized tests (0: from the clock)")

func testRand(t *testing.T) *rand.Rand {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed=%d)", s, s)
	return rand.New(rand.NewPCG(s, s))
}

// modelRec is what the model knows about a record.
type modelRec struct {
	value   string
	version client.Version
}

// TestLiteAgainstModel runs random single-key and multi-key operations
// against a lite node and a map, and checks that they agree.
func TestLiteAgainstModel(t *testing.T) {
	c := startLite(t)
	ctx := context.Background()
	r := testRand(t)
	majors := []string{"a", "b", "c"}
	minors := []string{"", "x", "y", "z", "zz"}
	model := map[string]modelRec{} // by key string
	randKey := func() client.Key {
		k := client.Key{Major: []string{majors[r.IntN(len(majors))]}}
		if m := minors[r.IntN(len(minors))]; m != "" {
			k.Minor = []string{m}
		}
		return k
	}
	staleOrCurrent := func(k client.Key) client.Version {
		if cur, ok := model[k.String()]; ok && r.IntN(2) == 0 {
			return cur.version
		}
		return client.Version(bytes.Repeat([]byte{0}, 16))
	}
	for step := range 400 {
		k := randKey()
		ks := k.String()
		cur, exists := model[ks]
		val := fmt.Sprintf("v%d", step)
		what := ""
		var done bool
		var err error
		var res client.Result
		switch op := r.IntN(7); op {
		case 0:
			what = "put"
			res.Version, err = c.Put(ctx, k, []byte(val))
			done = true
		case 1:
			what = "putIfAbsent"
			res, err = c.PutIfAbsent(ctx, k, []byte(val))
			done = !exists
		case 2:
			what = "putIfPresent"
			res, err = c.PutIfPresent(ctx, k, []byte(val))
			done = exists
		case 3:
			what = "putIfVersion"
			match := staleOrCurrent(k)
			res, err = c.PutIfVersion(ctx, k, []byte(val), match)
			done = exists && bytes.Equal(match, cur.version)
		case 4:
			what = "delete"
			res, err = c.Delete(ctx, k)
			done = exists
		case 5:
			what = "deleteIfVersion"
			match := staleOrCurrent(k)
			res, err = c.DeleteIfVersion(ctx, k, match)
			done = exists && bytes.Equal(match, cur.version)
		case 6:
			what = "get"
			rec, found, err := c.Get(ctx, k)
			if err != nil || found != exists || (found && (string(rec.Value) != cur.value || !bytes.Equal(rec.Version, cur.version))) {
				t.Fatalf("step %d: get %s = %q %v found=%v, %v; model %+v exists=%v", step, ks, rec.Value, rec.Version, found, err, cur, exists)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %s %s: %v", step, what, ks, err)
		}
		if what != "put" && res.Done != done {
			t.Fatalf("step %d: %s %s done=%v, model says %v", step, what, ks, res.Done, done)
		}
		switch {
		case !done:
		case what == "delete" || what == "deleteIfVersion":
			delete(model, ks)
		default:
			model[ks] = modelRec{value: val, version: res.Version}
		}
	}
	// Each major path reads back, in key order, as the model has it.
	for _, m := range majors {
		var want []string
		for ks := range model {
			if k := client.MustParseKey(ks); k.Major[0] == m {
				want = append(want, ks)
			}
		}
		slices.SortFunc(want, func(a, b string) int {
			ka, kb := client.MustParseKey(a), client.MustParseKey(b)
			return slices.Compare(ka.Minor, kb.Minor)
		})
		recs, err := c.MultiGet(ctx, client.Key{Major: []string{m}}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, rec := range recs {
			got = append(got, rec.Key.String())
			if mr := model[rec.Key.String()]; string(rec.Value) != mr.value {
				t.Errorf("%v = %q, model %q", rec.Key, rec.Value, mr.value)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("multiGet /%s = %v, model %v", m, got, want)
		}
	}
}
