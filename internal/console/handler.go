package console

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
)

// Source runs the console's admin commands.
type Source interface {
	// Command runs a read-only admin command (ping, verify configuration,
	// show ...) with its options as the caller ctx carries, as the admin
	// RPC runs a shell's. Errors are gRPC status errors.
	Command(ctx context.Context, command string, args map[string]string) (*cairnpb.AdminReply, error)
	// Self names the node that serves the console, e.g. "sn2 (127.0.0.1:6000)".
	Self() string
}

// Gate checks the caller of a request on a secure node and returns the
// request's context carrying it, or a gRPC status error: Unauthenticated
// (answered 401 with a Basic challenge) or PermissionDenied (403). A node
// that is not secure has none.
type Gate func(r *http.Request) (context.Context, error)

// Path is the console's page; its data is under it.
const Path = "/console"

// StateTimeout bounds the commands behind one state.
const StateTimeout = 5 * time.Second

// Owns reports whether path is one of the console's.
func Owns(path string) bool { return path == Path || strings.HasPrefix(path, Path+"/") }

// StateReuse is how long a state is served again to the next requests:
// every open tab polls, and ping and verify each ask every node, so tabs
// share one round of commands per second.
const StateReuse = time.Second

// Handler serves the console.
type Handler struct {
	src     Source
	gate    Gate
	timeout time.Duration
	reuse   time.Duration

	flight singleflight.Group // one collect at a time
	mu     sync.Mutex
	last   State // the newest state, collected at lastAt
	lastAt time.Time
}

// New returns the console of src, its callers checked by gate (nil: no
// check, on a node that is not secure).
func New(src Source, gate Gate) *Handler {
	return &Handler{src: src, gate: gate, timeout: StateTimeout, reuse: StateReuse}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var serve func(http.ResponseWriter, *http.Request)
	switch r.URL.Path {
	case Path, Path + "/":
		serve = h.page
	case Path + "/state.json":
		serve = h.state
	default:
		plain(w, http.StatusNotFound, r.URL.Path+" is not a page of the console: its page is "+Path+" and its data "+Path+"/state.json")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, "the console is read-only: "+r.Method+" is not allowed on "+r.URL.Path+"; use GET")
		return
	}
	if h.gate != nil {
		ctx, err := h.gate(r)
		if err != nil {
			refuse(w, err)
			return
		}
		r = r.WithContext(ctx)
	}
	serve(w, r)
}

// page answers GET /console: the page with the first state in it.
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	st := h.current(r.Context())
	b, err := json.Marshal(st) // escapes <, > and &: safe inside the page's data block
	if err != nil {
		plain(w, http.StatusInternalServerError, "console: "+err.Error())
		return
	}
	secureHeaders(w)
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(page.head)
	_, _ = w.Write(b)
	_, _ = w.Write(page.tail)
}

// state answers GET /console/state.json.
func (h *Handler) state(w http.ResponseWriter, r *http.Request) {
	st := h.current(r.Context())
	secureHeaders(w)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(st)
}

// secureHeaders asks the browser not to cache, sniff or frame the answer.
func secureHeaders(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

// refuse answers a request Gate refused.
func refuse(w http.ResponseWriter, err error) {
	st := status.Convert(err)
	switch st.Code() {
	case codes.Unauthenticated:
		w.Header().Set("WWW-Authenticate", `Basic realm="cairn", charset="UTF-8"`)
		plain(w, http.StatusUnauthorized, st.Message())
	case codes.PermissionDenied:
		plain(w, http.StatusForbidden, st.Message())
	default:
		plain(w, http.StatusServiceUnavailable, st.Message())
	}
}

// plain answers with a line of text.
func plain(w http.ResponseWriter, code int, msg string) {
	secureHeaders(w)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}

// NotServed answers every console path with 404 and why: for a node that
// has no admin service (cairn lite).
func NotServed(why string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		plain(w, http.StatusNotFound, why)
	})
}
