package httpapi

import (
	"context"
	"net/http"
	"sync"

	"github.com/cairndb/cairn/client"
)

// Lazy is the handler of a node: it opens its client (on the node itself)
// when the first request comes, since the node serves gRPC only once it
// is listening, and a storage node may join a store later. A failed open
// answers 503 and is tried again by the next request.
type Lazy struct {
	open     func(context.Context) (*client.Client, error)
	maxValue int64

	mu sync.Mutex
	h  *Handler
}

// NewLazy returns a Lazy that opens clients with open.
func NewLazy(open func(context.Context) (*client.Client, error), maxValue int64) *Lazy {
	return &Lazy{open: open, maxValue: maxValue}
}

func (l *Lazy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, err := l.handler(r.Context())
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]errorJSON{"error": {Code: "Unavailable", Kind: "not_ready",
			Action: client.ActionRetry.String(), Message: "this node cannot serve its store yet: " + err.Error()}})
		return
	}
	h.ServeHTTP(w, r)
}

func (l *Lazy) handler(ctx context.Context) (*Handler, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h != nil {
		return l.h, nil
	}
	c, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	l.h = New(c, l.maxValue)
	return l.h, nil
}

// Handler returns l as an http.Handler; nil for a nil l (no HTTP API).
func (l *Lazy) Handler() http.Handler {
	if l == nil {
		return nil
	}
	return l
}

// Close closes the client, if one was opened. A nil l does nothing.
func (l *Lazy) Close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h != nil {
		_ = l.h.c.Close()
		l.h = nil
	}
}
