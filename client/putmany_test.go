package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
)

// PutMany writes records of many major paths over the shards of a
// replicated store, one result per record in order; a record the server
// refuses (a value over the limit) fails alone and the others of its major
// path are written. An entry's TTL is its own: every third record expires
// in an hour, the others never.
func TestPutMany(t *testing.T) {
	tc := startCluster(t, 3, 2, 3)
	c := tc.open(t, 10*time.Second)
	var entries []client.Entry
	for m := range 40 {
		for i := range 12 {
			k := client.MustParseKey(fmt.Sprintf("/bulk/m%02d/-/r%02d", m, i))
			e := client.Entry{Key: k, Value: []byte(k.String())}
			if i%3 == 0 {
				e.TTL = time.Hour
			}
			entries = append(entries, e)
		}
	}
	bad := 7*12 + 3
	entries[bad].Value = bytes.Repeat([]byte("x"), 4<<20+1)
	res := c.PutMany(context.Background(), entries, 4)
	if len(res) != len(entries) {
		t.Fatalf("%d results for %d entries", len(res), len(entries))
	}
	for i, r := range res {
		if i == bad {
			var ce *client.Error
			if !errors.As(r.Err, &ce) || ce.Kind != client.KindLimitExceeded {
				t.Errorf("the oversized record: %v, want limit_exceeded", r.Err)
			}
			continue
		}
		if r.Err != nil || len(r.Version) == 0 {
			t.Fatalf("entry %d (%s): %v, version %v", i, entries[i].Key, r.Err, r.Version)
		}
		rec, found, err := c.Get(context.Background(), entries[i].Key, client.WithConsistency(client.Absolute))
		if err != nil || !found || !bytes.Equal(rec.Value, entries[i].Value) || !bytes.Equal(rec.Version, r.Version) {
			t.Fatalf("entry %d (%s) reads back %v %v %v", i, entries[i].Key, found, err, rec)
		}
		if left := time.Until(rec.Expiration); (entries[i].TTL > 0) != !rec.Expiration.IsZero() || left > time.Hour {
			t.Fatalf("entry %d (%s) with TTL %v expires at %v", i, entries[i].Key, entries[i].TTL, rec.Expiration)
		}
	}
}
