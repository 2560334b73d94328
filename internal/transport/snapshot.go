package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/internal/transport/transportpb"
)

// SnapshotSource is the data of one outbound snapshot (Config.OpenSnapshot).
// The transport calls Size once, then Next until io.EOF, then Close, all
// from the snapshot's goroutine; Close also follows a failure at any step.
type SnapshotSource interface {
	// Size returns the data's length in bytes, announced to the receiver
	// before the first chunk. Next must produce exactly that many.
	Size() (int64, error)
	// Next returns the next piece of the data, of any size but not empty
	// (the transport cuts it into chunks of at most
	// Config.SnapshotChunkBytes), and io.EOF after the last. The transport does not modify a piece and may keep it
	// until the next call.
	Next() ([]byte, error)
	// Close releases the source.
	Close()
}

// noData is the source of a snapshot whose message is all there is.
type noData struct{}

func (noData) Size() (int64, error)  { return 0, nil }
func (noData) Next() ([]byte, error) { return nil, io.EOF }
func (noData) Close()                {}

// startSnapshot sends m (a MsgSnap) on its own goroutine. Called inside the
// gate (from Send), so wg.Add never races with Close.
func (t *Transport) startSnapshot(shard ShardID, to NodeID, m *raftpb.Message) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		start := time.Now()
		size, err := t.sendSnapshot(shard, to, m)
		if t.closing() {
			return
		}
		log := t.log.With("shard", uint64(shard), "peer", uint64(to),
			"index", m.GetSnapshot().GetMetadata().GetIndex(), "bytes", size)
		if err != nil {
			log.Warn("snapshot send failed", "err", err)
		} else {
			took := time.Since(start)
			log.Info("snapshot sent", "took", took, "mib_per_s", fmt.Sprintf("%.1f", float64(size)/(1<<20)/max(took.Seconds(), 1e-3)))
		}
		t.reportSnapshot(shard, to, err == nil)
	}()
}

// openSource returns the data of m.
func (t *Transport) openSource(shard ShardID, to NodeID, m *raftpb.Message) (SnapshotSource, error) {
	if t.cfg.OpenSnapshot == nil {
		return noData{}, nil
	}
	src, err := t.cfg.OpenSnapshot(shard, to, m)
	if err != nil {
		return nil, fmt.Errorf("transport: opening the snapshot's data: %w", err)
	}
	return src, nil
}

// sendSnapshot streams m and its data to `to` on a connection of its own,
// so a large snapshot never delays the Messages stream, and waits for the
// Ack. It returns the data's size.
func (t *Transport) sendSnapshot(shard ShardID, to NodeID, m *raftpb.Message) (int64, error) {
	header, err := proto.Marshal(m)
	if err != nil {
		return 0, fmt.Errorf("transport: marshal snapshot header: %w", err)
	}
	src, err := t.openSource(shard, to, m)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	size, err := src.Size()
	if err != nil {
		return 0, fmt.Errorf("transport: sizing the snapshot's data: %w", err)
	}
	addr, ok := t.cfg.Resolve(to)
	if !ok {
		return size, errNoAddress
	}
	ctx, cancel := context.WithCancel(t.ctx)
	defer cancel()
	stall := time.AfterFunc(snapshotStallTimeout, cancel)
	defer stall.Stop()

	conn, err := t.dial(ctx, addr)
	if err != nil {
		return size, err
	}
	defer conn.Close()
	stream, err := transportpb.NewRaftClient(conn).Snapshot(ctx)
	if err != nil {
		return size, fmt.Errorf("transport: open snapshot stream to %s: %w", addr, err)
	}
	first := &transportpb.SnapshotChunk{FromNode: uint64(t.cfg.NodeID), Shard: uint64(shard), Header: header, Size: uint64(size), Last: size == 0}
	send := func(c *transportpb.SnapshotChunk) error {
		if err := stream.Send(c); err != nil {
			if errors.Is(err, io.EOF) { // the server ended the stream; ask why
				if _, rerr := stream.CloseAndRecv(); rerr != nil {
					err = rerr
				}
			}
			return fmt.Errorf("transport: send snapshot chunk: %w", err)
		}
		stall.Reset(snapshotStallTimeout)
		return nil
	}
	if err := send(first); err != nil {
		return size, err
	}
	if err := t.sendData(shard, src, size, send); err != nil {
		return size, err
	}
	if _, err := stream.CloseAndRecv(); err != nil {
		return size, fmt.Errorf("transport: snapshot not acknowledged: %w", err)
	}
	return size, nil
}

// sendData sends the source's data in chunks of at most SnapshotChunkBytes,
// the one that completes size marked last. A source that produces more or
// less than it announced fails the send.
func (t *Transport) sendData(shard ShardID, src SnapshotSource, size int64, send func(*transportpb.SnapshotChunk) error) error {
	var sent int64
	for sent < size {
		piece, err := src.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("transport: the snapshot's data ended at %d of the %d bytes announced", sent, size)
		} else if err != nil {
			return fmt.Errorf("transport: reading the snapshot's data: %w", err)
		}
		if len(piece) == 0 {
			return errors.New("transport: the snapshot's source returned an empty piece")
		}
		if sent+int64(len(piece)) > size {
			return fmt.Errorf("transport: the snapshot's data runs past the %d bytes announced", size)
		}
		for len(piece) > 0 {
			n := min(len(piece), t.cfg.SnapshotChunkBytes)
			sent += int64(n)
			c := &transportpb.SnapshotChunk{FromNode: uint64(t.cfg.NodeID), Shard: uint64(shard), Data: piece[:n], Last: sent == size}
			if err := send(c); err != nil {
				return err
			}
			piece = piece[n:]
		}
	}
	if _, err := src.Next(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("transport: the snapshot's data runs past the %d bytes announced", size)
	}
	return nil
}

// SnapshotData is the data of one inbound snapshot, read from its stream
// chunk by chunk: the receiver never holds more than one chunk.
// Handler.HandleSnapshot reads it on the goroutine that called it.
type SnapshotData struct {
	stream transportpb.Raft_SnapshotServer
	t      *Transport
	shard  ShardID
	size   int64
	got    int64
	first  []byte // the first chunk's data, not yet handed out
	last   bool   // the last chunk has been read
	err    error
}

// Size returns the data's length in bytes, as the sender announced it.
// Next refuses data that is longer or shorter.
func (d *SnapshotData) Size() int64 { return d.size }

// Context is the stream's: it ends when the sender goes away or the
// transport closes.
func (d *SnapshotData) Context() context.Context { return d.stream.Context() }

// Next returns the next piece of the data (at most SnapshotChunkBytes of
// the sender's; the caller may keep it), and io.EOF after the last. An
// error wrapping ErrMalformedSnapshot means the stream broke its rules.
func (d *SnapshotData) Next() ([]byte, error) {
	if d.first != nil {
		p := d.first
		d.first = nil
		return p, nil
	}
	for d.err == nil {
		if d.last {
			d.err = io.EOF
			break
		}
		c, err := d.stream.Recv()
		if errors.Is(err, io.EOF) {
			d.err = errBadSnapshot("stream ended before the last chunk")
			break
		}
		if err != nil {
			d.err = err
			break
		}
		if p, err := d.take(c); err != nil {
			d.err = err
		} else if len(p) > 0 {
			return p, nil
		}
	}
	return nil, d.err
}

// take checks one chunk and returns its data.
func (d *SnapshotData) take(c *transportpb.SnapshotChunk) ([]byte, error) {
	d.t.snapshotChunksRecv.Add(1)
	if ShardID(c.GetShard()) != d.shard {
		return nil, errBadSnapshot("chunks name different shards")
	}
	d.got += int64(len(c.GetData()))
	d.last = c.GetLast()
	switch {
	case d.got > d.size:
		return nil, errBadSnapshot(fmt.Sprintf("more data than the %d bytes announced", d.size))
	case d.last && d.got < d.size:
		return nil, errBadSnapshot(fmt.Sprintf("the last chunk ends the data at %d of the %d bytes announced", d.got, d.size))
	}
	return c.GetData(), nil
}

// done reports whether the data was read to its end.
func (d *SnapshotData) done() bool { return d.first == nil && errors.Is(d.err, io.EOF) }

// openSnapshot reads the first chunk of an inbound snapshot stream: the
// MsgSnap and the data's size.
func (t *Transport) openSnapshot(stream transportpb.Raft_SnapshotServer) (ShardID, *raftpb.Message, *SnapshotData, error) {
	c, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return 0, nil, nil, errBadSnapshot("stream ended before the first chunk")
	}
	if err != nil {
		return 0, nil, nil, err
	}
	if len(c.GetHeader()) == 0 {
		return 0, nil, nil, errBadSnapshot("first chunk has no header")
	}
	m := new(raftpb.Message)
	if err := proto.Unmarshal(c.GetHeader(), m); err != nil {
		return 0, nil, nil, errBadSnapshot(fmt.Sprintf("undecodable header: %v", err))
	}
	if m.GetType() != raftpb.MsgSnap {
		return 0, nil, nil, errBadSnapshot(fmt.Sprintf("header is a %v, not MsgSnap", m.GetType()))
	}
	if m.GetTo() != uint64(t.cfg.NodeID) {
		return 0, nil, nil, errBadSnapshot(fmt.Sprintf("snapshot is for node %d, this is node %d", m.GetTo(), t.cfg.NodeID))
	}
	if c.GetSize() > 1<<62 {
		return 0, nil, nil, errBadSnapshot(fmt.Sprintf("a size of %d bytes", c.GetSize()))
	}
	d := &SnapshotData{stream: stream, t: t, shard: ShardID(c.GetShard()), size: int64(c.GetSize())}
	p, err := d.take(c)
	if err != nil {
		return 0, nil, nil, err
	}
	if len(p) > 0 {
		d.first = p
	}
	return d.shard, m, d, nil
}

// ErrMalformedSnapshot is wrapped by the errors of an inbound snapshot
// stream that breaks its rules (no header, data longer or shorter than
// announced, chunks of different shards); the sender gets InvalidArgument.
var ErrMalformedSnapshot = errors.New("transport: malformed snapshot stream")

func errBadSnapshot(why string) error { return fmt.Errorf("%w: %s", ErrMalformedSnapshot, why) }
