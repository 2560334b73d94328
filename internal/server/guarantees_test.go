package server_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/node"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func putReq(key []string, minor []string, value string) *cairnpb.PutRequest {
	return &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: &cairnpb.Key{Major: key, Minor: minor}, Value: []byte(value)}}
}

// Guarantee E2 (docs/guarantees.md): a store started with less free space
// than it needs to open for writing serves reads only: puts and deletes are
// refused with disk_full and write nothing. (Deletes below the margin, with
// room to write, are TestDiskFull* in test/e2e, on a real small disk.)
func TestDiskFullRefusesPuts(t *testing.T) {
	root := t.TempDir()
	n := startLite(t, root)
	ctx := context.Background()
	if _, err := n.kv.Put(ctx, putReq([]string{"d"}, nil, "before")); err != nil {
		t.Fatal(err)
	}
	if err := n.close(); err != nil {
		t.Fatal(err)
	}
	cfg := node.DefaultLiteConfig(root)
	cfg.Host, cfg.Port, cfg.Store, cfg.Partitions = "127.0.0.1", 0, testStore, testPartitions
	cfg.MinFreeBytes = 1 << 62 // more than any disk has
	cfg.Logger = slog.New(slog.DiscardHandler)
	lite, err := node.StartLite(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	conn, err := grpc.NewClient(lite.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	kv := cairnpb.NewKVClient(conn)
	_, err = kv.Put(ctx, putReq([]string{"d"}, nil, "after"))
	if err := checkStatus(err, codes.ResourceExhausted, "disk_full"); err != nil {
		t.Fatal(err)
	}
	got, err := kv.Get(ctx, &cairnpb.GetRequest{Key: &cairnpb.Key{Major: []string{"d"}}})
	if err != nil || string(got.GetRecord().GetValue()) != "before" {
		t.Fatalf("after a refused put: %v, %v; want the old value", got, err)
	}
	// So far below the margin that it cannot even open for writing, the
	// store serves reads only, and says so.
	_, err = kv.Delete(ctx, &cairnpb.DeleteRequest{Op: &cairnpb.DeleteOp{Key: &cairnpb.Key{Major: []string{"d"}}}})
	if cerr := checkStatus(err, codes.ResourceExhausted, "disk_full"); cerr != nil || !strings.Contains(status.Convert(err).Message(), "read-only") {
		t.Fatalf("delete on a disk too full to open for writing: %v (%v)", cerr, status.Convert(err).Message())
	}
}

// Guarantee A2: a multi-get never sees part of an execute. Writers set two
// records of one major path to the same counter in one execute; readers must
// always see equal values.
func TestExecuteIsolatedFromMultiGet(t *testing.T) {
	n := startLite(t, t.TempDir())
	defer n.close()
	ctx := context.Background()
	major := []string{"iso"}
	exec := func(i int) error {
		v := []byte(strconv.Itoa(i))
		_, err := n.kv.Execute(ctx, &cairnpb.ExecuteRequest{Ops: []*cairnpb.Operation{
			{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: &cairnpb.Key{Major: major, Minor: []string{"a"}}, Value: v}}},
			{Op: &cairnpb.Operation_Put{Put: &cairnpb.PutOp{Key: &cairnpb.Key{Major: major, Minor: []string{"b"}}, Value: v}}},
		}})
		return err
	}
	if err := exec(0); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := exec(w*1_000_000 + i); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	reads := 0
	for reads < 1000 {
		resp, err := n.kv.MultiGet(ctx, &cairnpb.MultiGetRequest{Parent: &cairnpb.Key{Major: major}})
		if err != nil {
			t.Fatal(err)
		}
		recs := resp.GetRecords()
		if len(recs) != 2 || string(recs[0].GetValue()) != string(recs[1].GetValue()) {
			t.Fatalf("read %d saw a partial execute: %v", reads, recs)
		}
		reads++
	}
	close(stop)
	wg.Wait()
	t.Logf("%d multi-gets, none saw a partial execute", reads)
}
