package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/node"
)

// startLite runs a lite node on a free 127.0.0.1 port and opens a client to
// it; both stop when the test ends.
func startLite(t *testing.T) *client.Client {
	c, _ := startLiteAddr(t)
	return c
}

func startLiteAddr(t *testing.T) (*client.Client, string) {
	t.Helper()
	cfg := node.DefaultLiteConfig(t.TempDir())
	cfg.Port = 0
	cfg.Partitions = 4
	cfg.Logger = slog.New(slog.DiscardHandler)
	ctx := context.Background()
	n, err := node.StartLite(ctx, cfg)
	if err != nil {
		t.Fatalf("StartLite: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	c, err := client.Open(ctx, client.Config{Hosts: []string{n.Addr()}, Store: cfg.Store})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, n.Addr()
}

var k = client.MustParseKey

func mustPut(t *testing.T, c *client.Client, key, val string, opts ...client.Option) client.Version {
	t.Helper()
	v, err := c.Put(context.Background(), k(key), []byte(val), opts...)
	if err != nil {
		t.Fatalf("Put(%s): %v", key, err)
	}
	return v
}

func keyStrings[T any](t *testing.T, seq func(func(T, error) bool), key func(T) client.Key) []string {
	t.Helper()
	var out []string
	for x, err := range seq {
		if err != nil {
			t.Fatalf("iterator: %v", err)
		}
		out = append(out, key(x).String())
	}
	return out
}

func recKey(r client.Record) client.Key { return r.Key }
func sameKey(k client.Key) client.Key   { return k }

func TestLiteStoreInfoAndMismatch(t *testing.T) {
	c, addr := startLiteAddr(t)
	ctx := context.Background()
	info, err := c.StoreInfo(ctx)
	if err != nil || info.Store != "kvstore" || info.Partitions != 4 || info.Limits.MaxValueBytes != 4<<20 {
		t.Fatalf("StoreInfo = %+v, %v", info, err)
	}
	if _, err := client.Open(ctx, client.Config{Hosts: []string{addr}, Store: "other"}); !errors.Is(err, client.ErrStoreMismatch) {
		t.Errorf("Open(store other) = %v, want ErrStoreMismatch", err)
	}
}

func TestLitePutGetDelete(t *testing.T) {
	c := startLite(t)
	ctx := context.Background()
	v1 := mustPut(t, c, "/u/-/a", "one")
	rec, found, err := c.Get(ctx, k("/u/-/a"), client.WithConsistency(client.Absolute))
	if err != nil || !found || string(rec.Value) != "one" || !bytes.Equal(rec.Version, v1) || !rec.Expiration.IsZero() {
		t.Fatalf("Get = %+v, %v, %v; want value one version %v", rec, found, err, v1)
	}
	if !rec.Key.Equal(k("/u/-/a")) {
		t.Errorf("Get key %v", rec.Key)
	}
	if _, found, err := c.Get(ctx, k("/u/-/missing")); err != nil || found {
		t.Errorf("Get(missing) = %v, %v", found, err)
	}
	// The client reads its own write at AtVersion.
	if _, found, err := c.Get(ctx, k("/u/-/a"), client.WithConsistency(client.AtVersion(v1, time.Second))); err != nil || !found {
		t.Errorf("Get(AtVersion) = %v, %v", found, err)
	}

	res, err := c.Delete(ctx, k("/u/-/a"), client.WithReturn(client.ReturnAll))
	if err != nil || !res.Done || res.Previous == nil || string(res.Previous.Value) != "one" {
		t.Fatalf("Delete = %+v, %v", res, err)
	}
	if res, err := c.Delete(ctx, k("/u/-/a")); err != nil || res.Done || res.Previous != nil {
		t.Errorf("second Delete = %+v, %v; want not done", res, err)
	}

	v2 := mustPut(t, c, "/u/-/b", "two")
	if res, err := c.DeleteIfVersion(ctx, k("/u/-/b"), v1); err != nil || res.Done {
		t.Errorf("DeleteIfVersion(stale) = %+v, %v; want not done", res, err)
	}
	if res, err := c.DeleteIfVersion(ctx, k("/u/-/b"), v2); err != nil || !res.Done {
		t.Errorf("DeleteIfVersion(current) = %+v, %v; want done", res, err)
	}
}

func TestLiteConditionalPuts(t *testing.T) {
	c := startLite(t)
	ctx := context.Background()
	all := client.WithReturn(client.ReturnAll)

	res, err := c.PutIfPresent(ctx, k("/c/-/x"), []byte("v0"), all)
	if err != nil || res.Done || res.Previous != nil || res.Version != nil {
		t.Fatalf("PutIfPresent(absent) = %+v, %v; want not done, no previous", res, err)
	}
	res, err = c.PutIfAbsent(ctx, k("/c/-/x"), []byte("v1"), all)
	if err != nil || !res.Done || res.Version == nil || res.Previous != nil {
		t.Fatalf("PutIfAbsent(absent) = %+v, %v; want done with a version", res, err)
	}
	v1 := res.Version

	res, err = c.PutIfAbsent(ctx, k("/c/-/x"), []byte("v2"), all)
	if err != nil || res.Done || res.Previous == nil || string(res.Previous.Value) != "v1" || !bytes.Equal(res.Previous.Version, v1) {
		t.Fatalf("PutIfAbsent(present) = %+v, %v; want not done with previous v1", res, err)
	}
	res, err = c.PutIfPresent(ctx, k("/c/-/x"), []byte("v2"), client.WithReturn(client.ReturnVersion))
	if err != nil || !res.Done || res.Previous == nil || !bytes.Equal(res.Previous.Version, v1) {
		t.Fatalf("PutIfPresent(present) = %+v, %v; want done with previous version", res, err)
	}
	v2 := res.Version

	res, err = c.PutIfVersion(ctx, k("/c/-/x"), []byte("v3"), v1, all)
	if err != nil || res.Done || res.Previous == nil || string(res.Previous.Value) != "v2" {
		t.Fatalf("PutIfVersion(stale) = %+v, %v; want not done with previous v2", res, err)
	}
	res, err = c.PutIfVersion(ctx, k("/c/-/x"), []byte("v3"), v2)
	if err != nil || !res.Done || res.Previous != nil {
		t.Fatalf("PutIfVersion(current) = %+v, %v; want done, no previous (none asked)", res, err)
	}
	rec, _, _ := c.Get(ctx, k("/c/-/x"))
	if string(rec.Value) != "v3" || !bytes.Equal(rec.Version, res.Version) {
		t.Errorf("after PutIfVersion: %+v", rec)
	}
}

// tree writes /t (the parent), /t/-/a, /t/-/b, /t/-/b/x, /t/-/c, /t/-/d.
func tree(t *testing.T, c *client.Client) {
	t.Helper()
	for _, s := range []string{"/t", "/t/-/a", "/t/-/b", "/t/-/b/x", "/t/-/c", "/t/-/d"} {
		mustPut(t, c, s, "v"+s)
	}
}

func TestLiteMultiGet(t *testing.T) {
	c := startLite(t)
	ctx := context.Background()
	tree(t, c)
	for _, tc := range []struct {
		r    *client.KeyRange
		d    client.Depth
		want []string
	}{
		{nil, 0, []string{"/t", "/t/-/a", "/t/-/b", "/t/-/b/x", "/t/-/c", "/t/-/d"}},
		{nil, client.ChildrenOnly, []string{"/t/-/a", "/t/-/b", "/t/-/c", "/t/-/d"}},
		{nil, client.ParentAndChildren, []string{"/t", "/t/-/a", "/t/-/b", "/t/-/c", "/t/-/d"}},
		{nil, client.DescendantsOnly, []string{"/t/-/a", "/t/-/b", "/t/-/b/x", "/t/-/c", "/t/-/d"}},
		{client.Between("b", true, "c", false), client.DescendantsOnly, []string{"/t/-/b", "/t/-/b/x"}},
		{client.Between("a", false, "c", true), client.ChildrenOnly, []string{"/t/-/b", "/t/-/c"}},
		{client.From("c", true), client.ParentAndDescendants, []string{"/t", "/t/-/c", "/t/-/d"}},
		{client.To("b", false), client.ChildrenOnly, []string{"/t/-/a"}},
		{client.Prefix("b"), client.DescendantsOnly, []string{"/t/-/b", "/t/-/b/x"}},
	} {
		name := fmt.Sprintf("%v %v", tc.r, tc.d)
		recs, err := c.MultiGet(ctx, k("/t"), tc.r, tc.d)
		if err != nil {
			t.Fatalf("%s: MultiGet: %v", name, err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.Key.String())
			if string(r.Value) != "v"+r.Key.String() {
				t.Errorf("%s: %v has value %q", name, r.Key, r.Value)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: MultiGet = %v, want %v", name, got, tc.want)
		}
		ks, err := c.MultiGetKeys(ctx, k("/t"), tc.r, tc.d)
		if err != nil || len(ks) != len(tc.want) {
			t.Errorf("%s: MultiGetKeys = %v, %v", name, ks, err)
		}
		fwd := keyStrings(t, c.MultiGetIterator(ctx, client.Forward, 2, k("/t"), tc.r, tc.d), recKey)
		if !slices.Equal(fwd, tc.want) {
			t.Errorf("%s: forward iterator = %v, want %v", name, fwd, tc.want)
		}
		rev := keyStrings(t, c.MultiGetKeysIterator(ctx, client.Reverse, 2, k("/t"), tc.r, tc.d), sameKey)
		want := slices.Clone(tc.want)
		slices.Reverse(want)
		if !slices.Equal(rev, want) {
			t.Errorf("%s: reverse iterator = %v, want %v", name, rev, want)
		}
	}

	n, err := c.MultiDelete(ctx, k("/t"), client.Prefix("b"), client.DescendantsOnly)
	if err != nil || n != 2 {
		t.Fatalf("MultiDelete = %d, %v; want 2", n, err)
	}
	if ks, _ := c.MultiGetKeys(ctx, k("/t"), nil, 0); len(ks) != 4 {
		t.Errorf("after MultiDelete: %v", ks)
	}
}

func TestLiteIteratorBreak(t *testing.T) {
	c := startLite(t)
	ctx := context.Background()
	tree(t, c)
	var got []string
	for r, err := range c.MultiGetIterator(ctx, client.Reverse, 2, k("/t"), nil, client.ChildrenOnly) {
		if err != nil {
			t.Fatal(err)
		}
		if got = append(got, r.Key.String()); len(got) == 3 {
			break
		}
	}
	if !slices.Equal(got, []string{"/t/-/d", "/t/-/c", "/t/-/b"}) {
		t.Errorf("got %v", got)
	}
}

func TestLiteExecute(t *testing.T) {
	c := startLite(t)
	ctx := context.Background()
	mustPut(t, c, "/e/-/exists", "old")
	ops := []client.Op{
		client.OpPut(k("/e/-/new"), []byte("n")),
		client.OpPutIfAbsent(k("/e/-/exists"), []byte("x")).AbortIfUnsuccessful().Return(client.ReturnAll),
	}
	res, err := c.Execute(ctx, ops)
	var ee *client.ExecutionError
	if res != nil || !errors.As(err, &ee) || ee.Index != 1 || ee.Result.Done ||
		ee.Result.Previous == nil || string(ee.Result.Previous.Value) != "old" {
		t.Fatalf("Execute = %+v, %v; want *ExecutionError at op 1 with previous old", res, err)
	}
	if _, found, _ := c.Get(ctx, k("/e/-/new")); found {
		t.Error("an aborted Execute wrote op 0")
	}

	ops = []client.Op{
		client.OpPut(k("/e/-/new"), []byte("n")),
		client.OpPutIfAbsent(k("/e/-/exists"), []byte("x")),
		client.OpDelete(k("/e/-/exists")),
	}
	res, err = c.Execute(ctx, ops, client.WithReturn(client.ReturnValue))
	if err != nil || len(res) != 3 || !res[0].Done || res[0].Version == nil || res[1].Done || !res[2].Done ||
		res[2].Previous == nil || string(res[2].Previous.Value) != "old" {
		t.Fatalf("Execute = %+v, %v", res, err)
	}

	_, err = c.Execute(ctx, []client.Op{client.OpPut(k("/e/-/a"), nil), client.OpPut(k("/f/-/a"), nil)})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Kind != "multiple_major_paths" {
		t.Errorf("Execute across major paths = %v", err)
	}
}

func TestLiteStoreIterator(t *testing.T) {
	c := startLite(t)
	ctx := context.Background()
	want := map[string]bool{}
	for i := range 25 {
		for _, s := range []string{fmt.Sprintf("/s/%02d", i), fmt.Sprintf("/s/%02d/-/m", i), fmt.Sprintf("/other/%02d", i)} {
			mustPut(t, c, s, s)
			want[s] = true
		}
	}
	got := keyStrings(t, c.StoreIterator(ctx, 3, nil, nil, 0), recKey)
	if len(got) != len(want) {
		t.Fatalf("store scan returned %d records, want %d", len(got), len(want))
	}
	seen := map[string]bool{}
	for _, s := range got {
		if !want[s] || seen[s] {
			t.Errorf("store scan returned %s unexpectedly or twice", s)
		}
		seen[s] = true
	}

	parent := k("/s")
	sub := keyStrings(t, c.StoreKeysIterator(ctx, 4, &parent, nil, 0), sameKey)
	if len(sub) != 50 {
		t.Errorf("store scan under /s returned %d keys, want 50", len(sub))
	}
	sub = keyStrings(t, c.StoreKeysIterator(ctx, 4, &parent, client.Prefix("1"), client.ParentAndChildren), sameKey)
	if len(sub) != 10 {
		t.Errorf("store scan under /s with prefix 1 returned %v, want the 10 majors /s/1x", sub)
	}
}

func TestLiteTTL(t *testing.T) {
	c := startLite(t)
	ctx := context.Background()
	mustPut(t, c, "/ttl/-/short", "v", client.WithTTL(50*time.Millisecond))
	mustPut(t, c, "/ttl/-/long", "v", client.WithTTL(time.Hour))
	rec, found, err := c.Get(ctx, k("/ttl/-/long"))
	if err != nil || !found || rec.Expiration.IsZero() || time.Until(rec.Expiration) > time.Hour {
		t.Fatalf("Get(long) = %+v, %v, %v; want an expiration within the hour", rec, found, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, found, err := c.Get(ctx, k("/ttl/-/short"))
		if err != nil {
			t.Fatal(err)
		}
		if !found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a record with a 50ms TTL is still visible after 10s")
		}
	}
	if _, found, _ := c.Get(ctx, k("/ttl/-/long")); !found {
		t.Error("the record with a 1h TTL expired")
	}
}

func TestLiteLimits(t *testing.T) {
	c := startLite(t)
	ctx := context.Background()
	_, err := c.Put(ctx, k("/big"), make([]byte, 4<<20+1))
	var ce *client.Error
	if !errors.Is(err, client.ErrLimitExceeded) || !errors.As(err, &ce) || ce.Limit != "max_value_bytes" ||
		ce.Max != 4<<20 || ce.Seen != 4<<20+1 || ce.MaybeApplied {
		t.Fatalf("Put(oversized) = %v; want ErrLimitExceeded on max_value_bytes", err)
	}
	if !errors.Is(err, client.ErrInvalidArgument) {
		t.Errorf("limit error %v is not ErrInvalidArgument", err)
	}
}
