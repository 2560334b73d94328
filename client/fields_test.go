package client_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cairndb/cairn/client"
)

func TestLiteFields(t *testing.T) {
	c := startLite(t)
	ctx := context.Background()
	f := func(n, v string) client.Field { return client.Field{Name: n, Value: []byte(v)} }

	res, err := c.UpdateFields(ctx, k("/u/1"), []client.Field{f("a", "1")})
	if err != nil || res.Done {
		t.Fatalf("UpdateFields(absent) = %+v, %v; want not done", res, err)
	}
	if _, err := c.MergeFields(ctx, k("/u/1"), []client.Field{f("a", "1"), f("b", "2")}); err != nil {
		t.Fatalf("MergeFields(absent): %v", err)
	}
	res, err = c.UpdateFields(ctx, k("/u/1"), []client.Field{f("b", "two"), f("c", "3")})
	if err != nil || !res.Done {
		t.Fatalf("UpdateFields(present) = %+v, %v; want done", res, err)
	}
	rec, ok, err := c.Get(ctx, k("/u/1"))
	if err != nil || !ok || !bytes.Equal(rec.Version, res.Version) {
		t.Fatalf("Get = %+v, %v, %v; want the updated record at %x", rec, ok, err, res.Version)
	}
	fs, err := client.DecodeFields(rec.Value)
	want := []client.Field{f("a", "1"), f("b", "two"), f("c", "3")}
	if err != nil || !bytes.Equal(client.EncodeFields(fs), client.EncodeFields(want)) {
		t.Fatalf("record after the update: %q, %v; want %q", fs, err, want)
	}

	// A stored value that is not a field record is refused, and kept.
	mustPut(t, c, "/u/plain", "text")
	_, err = c.MergeFields(ctx, k("/u/plain"), []client.Field{f("a", "1")})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Kind != "not_field_record" || !errors.Is(err, client.ErrInvalidArgument) || ce.MaybeApplied {
		t.Fatalf("MergeFields over a plain value = %v; want kind not_field_record", err)
	}
	if rec, _, _ := c.Get(ctx, k("/u/plain")); string(rec.Value) != "text" {
		t.Fatalf("the refused merge changed the value to %q", rec.Value)
	}
	// A merged record over max_value_bytes is refused with limit_exceeded.
	big := make([]byte, 3<<20)
	if _, err := c.MergeFields(ctx, k("/u/big"), []client.Field{{Name: "a", Value: big}}); err != nil {
		t.Fatalf("MergeFields(3 MiB): %v", err)
	}
	_, err = c.MergeFields(ctx, k("/u/big"), []client.Field{{Name: "b", Value: big}})
	if !errors.Is(err, client.ErrLimitExceeded) || !errors.As(err, &ce) || ce.Limit != "max_value_bytes" {
		t.Fatalf("MergeFields to a 6 MiB record = %v; want ErrLimitExceeded on max_value_bytes", err)
	}
}
