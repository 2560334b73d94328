package client

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/api/cairnpb"
)

// pipeLink is one connection of the call socket, shared by the goroutines
// that call its node. Nothing runs on a link but its callers:
//
//   - Writing is combined. A call is encoded into the link's pending frames
//     under its lock; the caller that finds no writer at work becomes the
//     writer and writes everything pending in one write, again until
//     nothing is pending.
//
//   - Reading is a turn. One waiting caller at a time reads frames and
//     hands each answer to its caller by id; when its own answer comes, it
//     passes the turn to another waiting call, if any. So a lone caller
//     writes and reads its own call, with no hand-off to another goroutine,
//     and many callers share each write and each read.
//
//     call:    enqueue ─► [pending] ─► taken by the writer ─► written ─► answered
//     │                │                  │
//     broken: not sent (made again)   broken: maybe applied
//
// Invariants:
//   - every call enqueued gets exactly one outcome: its answer, its caller
//     giving up (ctx), or the link breaking; each removes it from waiting,
//     so exactly one of them answers it;
//   - while calls wait on a working link, one of them holds the reader's
//     turn or is about to take it (reading is set): a turn is given up only
//     to another waiting call, or when none waits;
//   - a call is "taken" once its bytes are handed to a write: a link that
//     breaks after that reports it sent (a write may have been applied),
//     and one that breaks before reports it not sent;
//   - a call's bytes are copied into pending when it is enqueued, so its
//     request is the caller's again as soon as enqueue returns;
//   - the token a call carries is decided in queue order, which is the
//     order of the writes, so the node sees the session's tokens in order;
//   - a caller that gives up leaves the link to the others: the node may
//     still run its call, and its answer is dropped. Only a call that
//     reaches its deadline on a link that read nothing for sockSilent, and
//     nothing since the call left, breaks the link;
//   - a broken link never takes a call again, and its connection is closed.
type pipeLink struct {
	c      net.Conn
	r      *bufio.Reader // the turn holder's
	opened time.Time
	// lastRead is when the last frame arrived, as time since opened.
	lastRead atomic.Int64
	isBroken atomic.Bool  // err is set (read without the lock)
	inflight atomic.Int32 // calls under way (sockPool.pick)

	// The frame being read, kept across turns (the turn holder's): a reader
	// whose ctx ends stops mid-frame, and the next one goes on from there.
	hdr    [4]byte
	hdrN   int
	inBody bool
	body   []byte
	bodyN  int
	rbuf   []byte

	mu         sync.Mutex // guards the fields below
	nextID     uint64
	sentTok    string      // the token the last call enqueued carried
	pending    []byte      // frames not yet written
	frameStart int         // where pending's last frame starts
	queued     []*pipeCall // the calls in pending
	writing    bool        // a caller is writing
	reading    bool        // a caller holds the reader's turn, or was given it
	turn       uint64      // counts the turns passed on
	cut        bool        // the turn's ctx ended: its read deadline is in the past
	lastUsed   int64       // a call's enqueue or a frame's arrival, since opened
	waiting    map[uint64]*pipeCall
	err        error // why the link broke; nil while it works
	spareBuf   []byte
	spareCalls []*pipeCall
	req        cairnpb.CallsRequest // enqueue's wrapper of one call, reused
}

// pipeCall is one call on a link.
type pipeCall struct {
	id      uint64
	ch      chan pipeResult // takes the reader's turn, then the one outcome
	taken   bool            // handed to a write (under the link's lock)
	takenAt int64           // when, as time since the link opened
}

type pipeResult struct {
	a    *cairnpb.StreamAnswer
	err  error // the link broke: the raw cause (an endFrame, an I/O error)
	sent bool
	turn bool // not an outcome: the call now holds the reader's turn
}

// notSent is a call that never left: its link broke first.
type notSent struct{ err error }

func (e notSent) Error() string { return "not sent: " + e.err.Error() }

func newPipeLink(c net.Conn, r *bufio.Reader) *pipeLink {
	return &pipeLink{c: c, r: r, opened: time.Now(), waiting: make(map[uint64]*pipeCall)}
}

func (l *pipeLink) broken() bool { return l.isBroken.Load() }

func (l *pipeLink) now() int64 { return int64(time.Since(l.opened)) }

// call makes call r on the link and waits for its outcome. The error is
// notSent (r never left: make it again), ctx's error, the link's failure
// (linkError's, or an end frame's status), or nil with r's answer.
func (l *pipeLink) call(ctx context.Context, r *cairnpb.StreamCall, token func() string) (*cairnpb.StreamAnswer, error) {
	if err := l.checkIdle(); err != nil {
		return nil, err
	}
	l.inflight.Add(1)
	defer l.inflight.Add(-1)
	pc := &pipeCall{ch: make(chan pipeResult, 2)}
	if err := l.enqueue(r, pc, token); err != nil {
		return nil, err
	}
	l.flush()
	res, gaveUp := l.wait(ctx, pc)
	markSent(ctx, res.sent)
	var ef *endFrame
	switch {
	case gaveUp:
		return nil, status.FromContextError(ctx.Err()).Err()
	case res.err == nil:
		return res.a, nil
	case errors.As(res.err, &ef):
		return nil, ef.err // the node's word on whether the call ran
	case !res.sent:
		return nil, notSent{res.err}
	}
	return nil, linkError(ctx, res.err)
}

// checkIdle makes sure a link that lay idle (no call, no reader, nothing
// buffered) for over sockProbeAfter was not closed by its node meanwhile
// (a node killed while the client was quiet): a call written on a dead
// link would be "maybe applied", where notSent lets it go on a new one.
func (l *pipeLink) checkIdle() error {
	l.mu.Lock()
	if l.err != nil {
		defer l.mu.Unlock()
		return notSent{l.err}
	}
	idle := !l.reading && len(l.waiting) == 0 && l.r.Buffered() == 0 && l.now()-l.lastUsed > int64(sockProbeAfter)
	l.mu.Unlock()
	if idle && !alive(l) {
		err := errors.New("the node closed the link")
		l.shut(err)
		return notSent{err}
	}
	return nil
}

// markSent sets the call attempt's sent flag (sent.go).
func markSent(ctx context.Context, sent bool) {
	if f, ok := ctx.Value(sentKey{}).(*atomic.Bool); sent && ok {
		f.Store(true)
	}
}

// enqueue encodes r, with the next id and the token if the link's differs,
// into the pending frames. A call too large or that does not encode is
// refused here, and nothing of it is queued.
func (l *pipeLink) enqueue(r *cairnpb.StreamCall, pc *pipeCall, token func() string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return notSent{l.err}
	}
	r.Id, r.Token = l.nextID+1, ""
	if token != nil {
		if tok := token(); tok != l.sentTok {
			r.Token = tok
		}
	}
	mark, start := len(l.pending), l.frameStart
	if len(l.pending) == 0 || len(l.pending)-l.frameStart-4 >= sockFrameTarget {
		l.endFrame()
		l.frameStart = len(l.pending)
		l.pending = append(l.pending, 0, 0, 0, 0)
	}
	l.req.Calls = append(l.req.Calls[:0], r)
	b, err := proto.MarshalOptions{}.MarshalAppend(l.pending, &l.req)
	l.req.Calls[0] = nil
	switch {
	case err != nil:
		err = status.Errorf(codes.InvalidArgument, "encoding the call: %v", err)
	case len(b)-mark > sockMaxFrame:
		err = status.Errorf(codes.ResourceExhausted, "a call of %d bytes is larger than the limit of %d", len(b)-mark, sockMaxFrame)
	case len(b)-l.frameStart-4 > sockMaxFrame:
		// r fits a frame alone, not with the calls before it.
		call := append([]byte(nil), b[mark:]...)
		l.pending = b[:mark]
		l.endFrame()
		l.frameStart = len(l.pending)
		b = append(append(l.pending, 0, 0, 0, 0), call...)
	}
	if err != nil {
		l.pending, l.frameStart = l.pending[:mark], start
		return err
	}
	l.pending = b
	l.nextID = r.Id
	if r.Token != "" {
		l.sentTok = r.Token
	}
	pc.id = r.Id
	l.lastUsed = l.now()
	l.waiting[pc.id] = pc
	l.queued = append(l.queued, pc)
	return nil
}

// endFrame writes the length of pending's last frame.
func (l *pipeLink) endFrame() {
	if len(l.pending) > l.frameStart {
		binary.BigEndian.PutUint32(l.pending[l.frameStart:], uint32(len(l.pending)-l.frameStart-4))
	}
}

// flush writes the pending frames, unless a writer is at work (it writes
// them next), until nothing is pending.
func (l *pipeLink) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.writing {
		return
	}
	l.writing = true
	defer func() { l.writing = false }()
	for len(l.pending) > 0 && l.err == nil {
		l.endFrame()
		buf, calls := l.pending, l.queued
		l.pending, l.queued, l.frameStart = l.spareBuf[:0], l.spareCalls[:0], 0
		at := l.now()
		for _, pc := range calls {
			pc.taken, pc.takenAt = true, at
		}
		l.mu.Unlock()
		_ = l.c.SetWriteDeadline(time.Now().Add(sockWriteTimeout))
		_, err := l.c.Write(buf)
		l.mu.Lock()
		if cap(buf) <= sockKeepBuf {
			l.spareBuf = buf[:0]
		}
		clear(calls)
		l.spareCalls = calls[:0]
		if err != nil {
			l.breakLocked(err)
		}
	}
}

// wait waits for pc's outcome, reading when it holds the reader's turn.
// It reports gaveUp when ctx ended first; res.sent then says whether pc
// left.
func (l *pipeLink) wait(ctx context.Context, pc *pipeCall) (res pipeResult, gaveUp bool) {
	l.mu.Lock()
	_, waits := l.waiting[pc.id]
	turn := waits && !l.reading
	if turn {
		l.reading = true
	}
	l.mu.Unlock()
	for {
		if turn {
			if res, ok := l.readUntil(ctx, pc); ok {
				return res, false
			}
			return l.giveUp(ctx, pc, true)
		}
		select {
		case res = <-pc.ch:
			if res.turn {
				turn = true
				continue
			}
			return res, false
		case <-ctx.Done():
			return l.giveUp(ctx, pc, false)
		}
	}
}

// readUntil reads frames, as the turn holder, until pc's outcome (ok) or
// ctx's end (not ok); either way it has passed the turn on. A cancelled
// ctx cuts a blocked read at once; the frame read so far is kept for the
// next turn.
func (l *pipeLink) readUntil(ctx context.Context, pc *pipeCall) (res pipeResult, ok bool) {
	l.mu.Lock()
	turn := l.turn
	l.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		if l.turn == turn { // still this turn: cut its read
			l.cut = true
			_ = l.c.SetReadDeadline(time.Unix(1, 0))
		}
		l.mu.Unlock()
	})
	defer stop()
	for {
		l.mu.Lock()
		if _, waits := l.waiting[pc.id]; !waits { // answered as the turn came, or broken
			l.passTurnLocked()
			l.mu.Unlock()
			return <-pc.ch, true
		}
		l.mu.Unlock()
		resp, err := l.readFrame()
		if err != nil {
			if isTimeout(err) && !l.broken() {
				if ctx.Err() != nil {
					return pipeResult{}, false // giveUp passes the turn on
				}
				l.mu.Lock() // not this turn's cut; never expected, but never a busy loop
				if ctx.Err() == nil {
					_ = l.c.SetReadDeadline(time.Time{})
				}
				l.mu.Unlock()
				continue
			}
			l.shut(err)
			continue // the break gave pc its outcome
		}
		at := l.now()
		l.lastRead.Store(at)
		l.mu.Lock()
		l.lastUsed = at
		for _, a := range resp.GetAnswers() {
			if a.GetId() == 0 {
				l.breakLocked(&endFrame{answerError(a)})
				break
			}
			if w := l.waiting[a.GetId()]; w != nil {
				delete(l.waiting, w.id)
				w.ch <- pipeResult{a: a, sent: true}
			}
		}
		l.mu.Unlock()
	}
}

// passTurnLocked gives the reader's turn, which the caller holds, to a
// call that waits, or ends it when none does (or the link broke).
func (l *pipeLink) passTurnLocked() {
	l.turn++
	if l.cut { // the next turn reads with no deadline
		l.cut = false
		_ = l.c.SetReadDeadline(time.Time{})
	}
	if l.err == nil {
		for _, w := range l.waiting {
			w.ch <- pipeResult{turn: true}
			return
		}
	}
	l.reading = false
}

// giveUp ends pc's wait when its caller's ctx ended. It reports gaveUp
// false when pc had its outcome already: res is that outcome. The reader's
// turn, if pc holds it (holdsTurn) or was given it and did not take it, is
// passed on.
func (l *pipeLink) giveUp(ctx context.Context, pc *pipeCall, holdsTurn bool) (res pipeResult, gaveUp bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, waits := l.waiting[pc.id]
	delete(l.waiting, pc.id) // first: the turn is not passed back to pc
	for len(pc.ch) > 0 {     // sent under the lock: all there
		if r := <-pc.ch; r.turn {
			holdsTurn = true
		} else {
			res = r
		}
	}
	if holdsTurn {
		l.passTurnLocked()
	}
	if !waits {
		return res, false
	}
	last := l.lastRead.Load()
	if pc.taken && last < pc.takenAt && l.now()-last >= int64(sockSilent) &&
		ctx.Err() == context.DeadlineExceeded {
		l.breakLocked(fmt.Errorf("the node sent nothing for %v", time.Duration(l.now()-last).Round(time.Millisecond)))
	}
	return pipeResult{sent: pc.taken}, true
}

// readFrame reads the next frame, going on with the one a turn before
// left unfinished.
func (l *pipeLink) readFrame() (*cairnpb.CallsResponse, error) {
	for l.hdrN < len(l.hdr) {
		n, err := l.r.Read(l.hdr[l.hdrN:])
		l.hdrN += n
		if err != nil && l.hdrN < len(l.hdr) {
			return nil, err
		}
	}
	if !l.inBody {
		n := binary.BigEndian.Uint32(l.hdr[:])
		if n > sockMaxFrame {
			return nil, fmt.Errorf("the node sent a frame of %d bytes, over the limit of %d", n, sockMaxFrame)
		}
		if cap(l.rbuf) < int(n) {
			l.rbuf = make([]byte, n)
		}
		l.body, l.bodyN, l.inBody = l.rbuf[:n], 0, true
	}
	for l.bodyN < len(l.body) {
		n, err := l.r.Read(l.body[l.bodyN:])
		l.bodyN += n
		if err != nil && l.bodyN < len(l.body) {
			return nil, err
		}
	}
	body := l.body
	l.hdrN, l.inBody, l.body = 0, false, nil
	if len(body) > sockKeepBuf {
		l.rbuf = nil
	}
	resp := new(cairnpb.CallsResponse)
	if err := proto.Unmarshal(body, resp); err != nil {
		return nil, fmt.Errorf("an undecodable frame from the node: %v", err)
	}
	return resp, nil
}

// isTimeout reports whether err is a read cut by a deadline.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// shut breaks the link with err, unless it broke already.
func (l *pipeLink) shut(err error) {
	l.mu.Lock()
	l.breakLocked(err)
	l.mu.Unlock()
}

// breakLocked breaks the link: its connection is closed, and every call
// waiting gets err, sent or not. The first cause stands.
func (l *pipeLink) breakLocked(err error) {
	if l.err != nil {
		return
	}
	l.err = err
	l.isBroken.Store(true)
	l.c.Close()
	for id, pc := range l.waiting {
		delete(l.waiting, id)
		pc.ch <- pipeResult{err: err, sent: pc.taken}
	}
	l.pending, l.queued = nil, nil
}
