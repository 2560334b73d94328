package client

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// fakeKV is a scripted KV server: each RPC calls its hook, if set, and
// records the request header.
type fakeKV struct {
	cairnpb.UnimplementedKVServer
	store string

	get       func(context.Context, *cairnpb.GetRequest) (*cairnpb.GetResponse, error)
	put       func(context.Context, *cairnpb.PutRequest) (*cairnpb.WriteResponse, error)
	execute   func(context.Context, *cairnpb.ExecuteRequest) (*cairnpb.ExecuteResponse, error)
	multiGet  func(context.Context, *cairnpb.MultiGetRequest) (*cairnpb.MultiGetResponse, error)
	storeScan func(context.Context, *cairnpb.StoreScanRequest) (*cairnpb.StoreScanResponse, error)
	putMany   func(context.Context, *cairnpb.PutManyRequest) (*cairnpb.PutManyResponse, error)
	// info, if set, answers StoreInfo (a replicated store's node).
	info  func() *cairnpb.StoreInfoResponse
	infos atomic.Int64 // StoreInfo calls

	calls   atomic.Int64 // RPCs other than StoreInfo
	mu      sync.Mutex
	headers []*cairnpb.RequestHeader
}

func (f *fakeKV) record(h *cairnpb.RequestHeader) {
	f.calls.Add(1)
	f.mu.Lock()
	f.headers = append(f.headers, h)
	f.mu.Unlock()
}

func (f *fakeKV) StoreInfo(context.Context, *cairnpb.StoreInfoRequest) (*cairnpb.StoreInfoResponse, error) {
	f.infos.Add(1)
	if f.info != nil {
		return f.info(), nil
	}
	return &cairnpb.StoreInfoResponse{Store: f.store, Partitions: 4, Version: "fake",
		Limits: &cairnpb.Limits{MaxKeyBytes: 10 << 10, MaxValueBytes: 4 << 20, MaxComponents: 64}}, nil
}

func (f *fakeKV) Get(ctx context.Context, r *cairnpb.GetRequest) (*cairnpb.GetResponse, error) {
	f.record(r.GetHeader())
	return f.get(ctx, r)
}

func (f *fakeKV) Put(ctx context.Context, r *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
	f.record(r.GetHeader())
	return f.put(ctx, r)
}

func (f *fakeKV) Execute(ctx context.Context, r *cairnpb.ExecuteRequest) (*cairnpb.ExecuteResponse, error) {
	f.record(r.GetHeader())
	return f.execute(ctx, r)
}

func (f *fakeKV) MultiGet(ctx context.Context, r *cairnpb.MultiGetRequest) (*cairnpb.MultiGetResponse, error) {
	f.record(r.GetHeader())
	return f.multiGet(ctx, r)
}

func (f *fakeKV) StoreScan(ctx context.Context, r *cairnpb.StoreScanRequest) (*cairnpb.StoreScanResponse, error) {
	f.record(r.GetHeader())
	return f.storeScan(ctx, r)
}

func (f *fakeKV) PutMany(ctx context.Context, r *cairnpb.PutManyRequest) (*cairnpb.PutManyResponse, error) {
	f.record(r.GetHeader())
	return f.putMany(ctx, r)
}

// serveFake serves f on a free 127.0.0.1 port until the test ends.
func serveFake(t testing.TB, f *fakeKV) (addr string, srv *grpc.Server) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv = grpc.NewServer()
	cairnpb.RegisterKVServer(srv, f)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), srv
}

// deadAddr returns an address where nothing listens. It is on 127.0.0.2,
// where no fake node listens (they take 127.0.0.1 ports): a port freed on
// 127.0.0.1 could be handed to the next fake node, and the topology would
// then hold one address twice (a clean-clone CI run saw exactly that).
func deadAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

func openFake(t testing.TB, hosts ...string) *Client {
	t.Helper()
	c, err := Open(context.Background(), Config{Hosts: hosts, Store: "kvstore"})
	if err != nil {
		t.Fatalf("Open(%v): %v", hosts, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// serverError is a Cairn-style status with an ErrorDetail.
func serverError(c codes.Code, kind string, a cairnpb.ErrorDetail_Action, maybeApplied bool) error {
	st, _ := status.New(c, kind).WithDetails(&cairnpb.ErrorDetail{Kind: kind, Action: a, MaybeApplied: maybeApplied})
	return st.Err()
}

func TestOpenStoreMismatch(t *testing.T) {
	addr, _ := serveFake(t, &fakeKV{store: "other"})
	_, err := Open(context.Background(), Config{Hosts: []string{addr}, Store: "kvstore"})
	if !errors.Is(err, ErrStoreMismatch) {
		t.Fatalf("Open = %v, want ErrStoreMismatch", err)
	}
}

func TestOpenNoHostAnswers(t *testing.T) {
	_, err := Open(context.Background(), Config{Hosts: []string{deadAddr(t), deadAddr(t)}, Store: "kvstore"})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open = %v, want ErrUnavailable", err)
	}
}

func TestOpenSkipsDeadHost(t *testing.T) {
	addr, _ := serveFake(t, &fakeKV{store: "kvstore"})
	c := openFake(t, deadAddr(t), addr)
	info, err := c.StoreInfo(context.Background())
	if err != nil || info.Store != "kvstore" || info.Partitions != 4 || info.Limits.MaxValueBytes != 4<<20 {
		t.Fatalf("StoreInfo = %+v, %v", info, err)
	}
}

func TestRequestHeader(t *testing.T) {
	f := &fakeKV{store: "kvstore", get: func(ctx context.Context, r *cairnpb.GetRequest) (*cairnpb.GetResponse, error) {
		// The timeout travels in the header only (callctx.go).
		if dl, ok := ctx.Deadline(); ok {
			return nil, status.Errorf(codes.Internal, "the call carries a gRPC deadline (%v)", time.Until(dl))
		}
		return &cairnpb.GetResponse{}, nil
	}}
	addr, _ := serveFake(t, f)
	c := openFake(t, addr)
	if _, found, err := c.Get(context.Background(), MustParseKey("/a"), WithTimeout(3*time.Second)); err != nil || found {
		t.Fatalf("Get = %v, %v", found, err)
	}
	h := f.headers[0]
	if h.GetStore() != "kvstore" || h.GetTimeoutMs() <= 0 || h.GetTimeoutMs() > 3000 {
		t.Errorf("header = %v, want store kvstore and 0 < timeout_ms <= 3000", h)
	}
}

// TestTimeoutCancelsServerCall: with no gRPC deadline on the call, the
// client still gives up at its timeout, with DeadlineExceeded, and the
// server's handler sees its context end.
func TestTimeoutCancelsServerCall(t *testing.T) {
	ended := make(chan error, 1)
	f := &fakeKV{store: "kvstore", get: func(ctx context.Context, r *cairnpb.GetRequest) (*cairnpb.GetResponse, error) {
		select {
		case <-ctx.Done():
			ended <- ctx.Err()
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			ended <- nil
			return &cairnpb.GetResponse{}, nil
		}
	}}
	addr, _ := serveFake(t, f)
	c := openFake(t, addr)
	start := time.Now()
	_, _, err := c.Get(context.Background(), MustParseKey("/a"), WithTimeout(300*time.Millisecond))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Get against a server that never answers = %v, want a timeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Get gave up after %v, want about 300ms", took)
	}
	select {
	case serr := <-ended:
		if serr == nil {
			t.Fatal("the server's handler ran to its end: the client's give-up never reached it")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server's handler context did not end within 10s of the client giving up")
	}
}

func TestReadRetriesUnavailable(t *testing.T) {
	f := &fakeKV{store: "kvstore"}
	f.get = func(context.Context, *cairnpb.GetRequest) (*cairnpb.GetResponse, error) {
		if f.calls.Load() < 3 {
			return nil, serverError(codes.Unavailable, "no_leader", cairnpb.ErrorDetail_ACTION_RETRY, false)
		}
		return &cairnpb.GetResponse{Found: true, Record: &cairnpb.Record{
			Key: &cairnpb.Key{Major: []string{"a"}}, Value: []byte("v"), Version: []byte{1}, ExpirationMs: 1000}}, nil
	}
	addr, _ := serveFake(t, f)
	c := openFake(t, addr)
	rec, found, err := c.Get(context.Background(), MustParseKey("/a"))
	if err != nil || !found || string(rec.Value) != "v" || rec.Expiration.UnixMilli() != 1000 {
		t.Fatalf("Get = %+v, %v, %v", rec, found, err)
	}
	if n := f.calls.Load(); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
}

func TestWriteRetry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maybe    bool
		attempts int64
	}{
		{"not applied: retried", false, 2},
		{"maybe applied: surfaced", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeKV{store: "kvstore"}
			f.put = func(context.Context, *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
				if f.calls.Load() == 1 {
					return nil, serverError(codes.Unavailable, "leader_lost", cairnpb.ErrorDetail_ACTION_RETRY, tc.maybe)
				}
				return &cairnpb.WriteResponse{Result: &cairnpb.OperationResult{Success: true, NewVersion: []byte{7}}}, nil
			}
			addr, _ := serveFake(t, f)
			c := openFake(t, addr)
			v, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v"))
			var e *Error
			if tc.maybe {
				if !errors.As(err, &e) || !e.MaybeApplied {
					t.Fatalf("Put = %v, %v; want a MaybeApplied error", v, err)
				}
			} else if err != nil || v.String() != "07" {
				t.Fatalf("Put = %v, %v; want version 07", v, err)
			}
			if n := f.calls.Load(); n != tc.attempts {
				t.Errorf("%d attempts, want %d", n, tc.attempts)
			}
		})
	}
}

func TestWriteBrokenConnectionIsMaybeApplied(t *testing.T) {
	f := &fakeKV{store: "kvstore"}
	addr, srv := serveFake(t, f)
	f.put = func(ctx context.Context, _ *cairnpb.PutRequest) (*cairnpb.WriteResponse, error) {
		go srv.Stop() // drop every connection while the request is in flight
		<-ctx.Done()
		return nil, ctx.Err()
	}
	c := openFake(t, addr)
	_, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v"))
	var e *Error
	if !errors.As(err, &e) || !e.MaybeApplied || e.Code != codes.Unavailable {
		t.Fatalf("Put = %v; want Unavailable with MaybeApplied", err)
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

func TestWriteRefusedIsNotMaybeApplied(t *testing.T) {
	f := &fakeKV{store: "kvstore"}
	addr, srv := serveFake(t, f)
	c := openFake(t, addr)
	srv.Stop()
	// Wait until every connection has noticed, so the put is refused before
	// anything is sent; a request written to a connection that then breaks
	// is (rightly) MaybeApplied.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, cc := range c.conns {
		for cc.GetState() == connectivity.Ready {
			if !cc.WaitForStateChange(ctx, connectivity.Ready) {
				t.Fatal("connection still ready 5s after the server stopped")
			}
		}
	}
	_, err := c.Put(context.Background(), MustParseKey("/a"), []byte("v"), WithTimeout(300*time.Millisecond))
	var e *Error
	if !errors.As(err, &e) || e.MaybeApplied || !(e.Code == codes.Unavailable || e.Code == codes.DeadlineExceeded) {
		t.Fatalf("Put = %v; want Unavailable or DeadlineExceeded, not MaybeApplied", err)
	}
}

// pager serves recs in pages of the request's batch size, with the next
// index as the resume token.
func pager(recs []*cairnpb.Record, batch int32, resume []byte) ([]*cairnpb.Record, []byte) {
	i := 0
	if len(resume) > 0 {
		i, _ = strconv.Atoi(string(resume))
	}
	if batch == 0 {
		batch = int32(len(recs))
	}
	j := min(i+int(batch), len(recs))
	if j == len(recs) {
		return recs[i:j], nil
	}
	return recs[i:j], []byte(strconv.Itoa(j))
}

func testRecords(n int) []*cairnpb.Record {
	var recs []*cairnpb.Record
	for i := range n {
		recs = append(recs, &cairnpb.Record{Key: &cairnpb.Key{Major: []string{"p"}, Minor: []string{strconv.Itoa(i)}}})
	}
	return recs
}

func TestMultiGetIteratorPaging(t *testing.T) {
	recs := testRecords(5)
	f := &fakeKV{store: "kvstore"}
	var dirs []cairnpb.Direction
	f.multiGet = func(_ context.Context, r *cairnpb.MultiGetRequest) (*cairnpb.MultiGetResponse, error) {
		dirs = append(dirs, r.GetDirection())
		page, next := pager(recs, r.GetBatchSize(), r.GetResume())
		return &cairnpb.MultiGetResponse{Records: page, Resume: next}, nil
	}
	addr, _ := serveFake(t, f)
	c := openFake(t, addr)
	ctx := context.Background()

	var got []string
	for k, err := range c.MultiGetKeysIterator(ctx, Reverse, 2, MustParseKey("/p"), nil, 0) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, k.String())
	}
	if len(got) != 5 || got[4] != "/p/-/4" || f.calls.Load() != 3 {
		t.Errorf("keys %v after %d pages, want 5 keys in 3 pages", got, f.calls.Load())
	}
	if dirs[0] != cairnpb.Direction_DIRECTION_REVERSE {
		t.Errorf("direction %v, want REVERSE", dirs[0])
	}

	// Breaking stops the fetching: 3 records need 2 pages of 2.
	f.calls.Store(0)
	n := 0
	for _, err := range c.MultiGetIterator(ctx, Forward, 2, MustParseKey("/p"), nil, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	if f.calls.Load() != 2 {
		t.Errorf("%d pages fetched for 3 records, want 2", f.calls.Load())
	}

	// MultiGet asks for everything (batch 0) but follows a resume token.
	f.calls.Store(0)
	all, err := c.MultiGet(ctx, MustParseKey("/p"), nil, 0)
	if err != nil || len(all) != 5 {
		t.Fatalf("MultiGet = %d records, %v", len(all), err)
	}
}

func TestIteratorYieldsErrorLast(t *testing.T) {
	recs := testRecords(4)
	f := &fakeKV{store: "kvstore"}
	f.storeScan = func(_ context.Context, r *cairnpb.StoreScanRequest) (*cairnpb.StoreScanResponse, error) {
		if len(r.GetResume()) > 0 {
			return nil, serverError(codes.InvalidArgument, "bad_resume", cairnpb.ErrorDetail_ACTION_FIX_INPUT, false)
		}
		if r.GetParent() != nil {
			return nil, status.Error(codes.Internal, "parent should be unset for a whole-store scan")
		}
		page, next := pager(recs, r.GetBatchSize(), nil)
		return &cairnpb.StoreScanResponse{Records: page, Resume: next}, nil
	}
	addr, _ := serveFake(t, f)
	c := openFake(t, addr)
	var n int
	var last error
	for _, err := range c.StoreKeysIterator(context.Background(), 2, nil, nil, 0) {
		if last != nil {
			t.Fatal("element after an error")
		}
		if err != nil {
			last = err
			continue
		}
		n++
	}
	if n != 2 || !errors.Is(last, ErrInvalidArgument) {
		t.Errorf("%d keys then %v; want 2 keys then an invalid-argument error", n, last)
	}
}

func TestExecute(t *testing.T) {
	f := &fakeKV{store: "kvstore"}
	f.execute = func(_ context.Context, r *cairnpb.ExecuteRequest) (*cairnpb.ExecuteResponse, error) {
		if !r.GetOps()[1].GetAbortIfUnsuccessful() {
			return &cairnpb.ExecuteResponse{Committed: true, Results: []*cairnpb.OperationResult{{Success: true}, {Success: true}}}, nil
		}
		return &cairnpb.ExecuteResponse{FailedIndex: 1, FailedResult: &cairnpb.OperationResult{
			PreviousExists: true, PreviousValue: []byte("old")}}, nil
	}
	addr, _ := serveFake(t, f)
	c := openFake(t, addr)
	ctx := context.Background()
	a, b := MustParseKey("/m/-/a"), MustParseKey("/m/-/b")

	res, err := c.Execute(ctx, []Op{OpPut(a, nil), OpDelete(b)})
	if err != nil || len(res) != 2 || !res[1].Done {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	res, err = c.Execute(ctx, []Op{OpPut(a, nil), OpPutIfAbsent(b, nil).AbortIfUnsuccessful().Return(ReturnAll)})
	var ee *ExecutionError
	if res != nil || !errors.As(err, &ee) || ee.Index != 1 || ee.Result.Previous == nil ||
		string(ee.Result.Previous.Value) != "old" || !ee.Result.Previous.Key.Equal(b) {
		t.Fatalf("Execute = %+v, %v; want *ExecutionError at 1 with the previous record", res, err)
	}

	f.calls.Store(0)
	_, err = c.Execute(ctx, []Op{OpPut(a, nil), OpPut(MustParseKey("/n/-/a"), nil)})
	if !isKind(err, KindMultipleMajorPaths) || !errors.Is(err, ErrInvalidArgument) || f.calls.Load() != 0 {
		t.Errorf("Execute across major paths = %v after %d RPCs; want multiple_major_paths before sending", err, f.calls.Load())
	}
}

// TestInvalidUTF8RefusedBeforeSending checks that every operation refuses
// a key or key range with invalid UTF-8 before sending, with the error the
// server gives for it: InvalidArgument, kind invalid_key, FIX_INPUT, naming
// the field; never MaybeApplied.
func TestInvalidUTF8RefusedBeforeSending(t *testing.T) {
	f := &fakeKV{store: "kvstore"}
	addr, _ := serveFake(t, f)
	c := openFake(t, addr)
	ctx := context.Background()
	const bad = "a\xffb"
	okKey := Key{Major: []string{"m"}, Minor: []string{"x"}}
	badMajor := Key{Major: []string{"m", bad}}
	badMinor := Key{Major: []string{"m"}, Minor: []string{"x", bad}}
	firstErr := func(seq func(func(Record, error) bool)) error {
		var err error
		seq(func(_ Record, e error) bool { err = e; return e == nil })
		return err
	}
	for _, tc := range []struct {
		name string
		call func() error
		says string
	}{
		{"Get", func() error { _, _, err := c.Get(ctx, badMajor); return err }, "key: invalid key: major component 1"},
		{"Put", func() error { _, err := c.Put(ctx, badMinor, nil); return err }, "put.key: invalid key: minor component 1"},
		{"PutIfAbsent", func() error { _, err := c.PutIfAbsent(ctx, badMajor, nil); return err }, "put.key: "},
		{"PutIfPresent", func() error { _, err := c.PutIfPresent(ctx, badMajor, nil); return err }, "put.key: "},
		{"PutIfVersion", func() error { _, err := c.PutIfVersion(ctx, badMajor, nil, Version{1}); return err }, "put.key: "},
		{"Delete", func() error { _, err := c.Delete(ctx, badMinor); return err }, "delete.key: invalid key: minor component 1"},
		{"DeleteIfVersion", func() error { _, err := c.DeleteIfVersion(ctx, badMajor, Version{1}); return err }, "delete.key: "},
		{"Execute", func() error {
			_, err := c.Execute(ctx, []Op{OpPut(okKey, nil), OpDelete(badMinor)})
			return err
		}, "execute: op 1: delete.key: invalid key: minor component 1"},
		{"MultiGet parent", func() error { _, err := c.MultiGet(ctx, badMajor, nil, 0); return err }, "parent: invalid key: major component 1"},
		{"MultiGet range", func() error { _, err := c.MultiGet(ctx, okKey, Prefix(bad), 0); return err }, "key range prefix is not valid UTF-8"},
		{"MultiGetKeys", func() error { _, err := c.MultiGetKeys(ctx, okKey, From(bad, true), 0); return err }, "key range start"},
		{"MultiDelete parent", func() error { _, err := c.MultiDelete(ctx, badMinor, nil, 0); return err }, "parent: "},
		{"MultiDelete range", func() error { _, err := c.MultiDelete(ctx, okKey, To(bad, true), 0); return err }, "key range end"},
		{"MultiGetIterator", func() error { return firstErr(c.MultiGetIterator(ctx, Forward, 10, badMajor, nil, 0)) }, "parent: "},
		{"StoreIterator parent", func() error {
			return firstErr(c.StoreIterator(ctx, 10, &Key{Major: []string{bad}}, nil, 0))
		}, "parent: invalid key: major component 0"},
		{"StoreIterator range", func() error {
			// An unset bound is sent all the same, so it is checked too.
			return firstErr(c.StoreIterator(ctx, 10, nil, &KeyRange{Start: bad}, 0))
		}, "key range start"},
	} {
		err := tc.call()
		var e *Error
		if !errors.As(err, &e) || e.Code != codes.InvalidArgument || e.Kind != KindInvalidKey || e.Action != ActionFixInput ||
			e.MaybeApplied || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v; want an invalid_key InvalidArgument FIX_INPUT error", tc.name, err)
			continue
		}
		if !strings.Contains(e.Msg, tc.says) || !utf8.ValidString(e.Msg) {
			t.Errorf("%s: message %q does not say %q (or is not valid UTF-8)", tc.name, e.Msg, tc.says)
		}
	}
	if n := f.calls.Load(); n != 0 {
		t.Errorf("%d requests reached the server; want none", n)
	}
}
