package server

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
)

// heldStream is a callsStream whose first Send waits until release is
// closed; it records how many answers each Send carried.
type heldStream struct {
	release chan struct{}
	mu      sync.Mutex
	sends   []int
	entered chan struct{} // closed when the first Send starts
	once    sync.Once
}

func (h *heldStream) Recv() (*cairnpb.CallsRequest, error) { select {} }
func (h *heldStream) Context() context.Context             { return context.Background() }

func (h *heldStream) Send(r *cairnpb.CallsResponse) error {
	first := false
	h.once.Do(func() { first = true; close(h.entered) })
	if first {
		<-h.release
	}
	h.mu.Lock()
	h.sends = append(h.sends, len(r.GetAnswers()))
	h.mu.Unlock()
	return nil
}

func (h *heldStream) counts() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.sends...)
}

func newHeld() *heldStream {
	return &heldStream{release: make(chan struct{}), entered: make(chan struct{})}
}

func bigAnswer(id uint64, n int) *cairnpb.StreamAnswer {
	return &cairnpb.StreamAnswer{Id: id, Op: &cairnpb.StreamAnswer_Get{Get: &cairnpb.GetResponse{Found: true, Record: &cairnpb.Record{Value: make([]byte, n)}}}}
}

// Answers that finish while another is being sent queue and return at
// once; the sender then sends them together, in messages of at most
// maxAnswerBatch bytes; stop waits until they are all sent.
func TestAnswersCombineWhileOneIsSent(t *testing.T) {
	h := newHeld()
	s := &callSession{stream: h}
	s.sent.L = &s.outMu
	go s.answer(bigAnswer(1, 10))
	<-h.entered
	var queued sync.WaitGroup
	sizes := []int{10, 10, 10, maxAnswerBatch / 2, maxAnswerBatch / 2}
	for i, n := range sizes {
		queued.Add(1)
		go func() { defer queued.Done(); s.answer(bigAnswer(uint64(i+2), n)) }()
	}
	done := make(chan struct{})
	go func() { queued.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("answers waited for the sender instead of queueing")
	}
	// stop, called while the answers are queued, returns only once they
	// were all sent: what was sent when it returned is counted then.
	type stopped struct {
		lost bool
		sent []int
	}
	stop := make(chan stopped)
	go func() { lost := s.stop(); stop <- stopped{lost, h.counts()} }()
	for deadline := time.Now().Add(10 * time.Second); !s.isClosed(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("stop did not start")
		}
	}
	close(h.release)
	select {
	case st := <-stop:
		// The first alone; then the 5 queued in messages of 1 MiB at most:
		// 10 + 10 + 10 + 512 KiB, and the last 512 KiB alone.
		if want := []int{1, 4, 1}; st.lost || fmt.Sprint(st.sent) != fmt.Sprint(want) {
			t.Fatalf("when stop returned: lost %v, sends carried %v answers; want %v", st.lost, st.sent, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not return once the sender finished")
	}
}

func (s *callSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
