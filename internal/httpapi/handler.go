package httpapi

import (
	"context"
	_ "embed"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/cli"
)

// Handler serves the HTTP API through a smart client.
type Handler struct {
	c        *client.Client
	mux      *http.ServeMux
	maxValue int64 // the most body bytes a put reads
	// keyRoutes serves the paths that carry a key, by prefix and method.
	// They bypass the ServeMux, which "cleans" a path by redirecting
	// /v1/kv/users//alice to /v1/kv/users/alice: a key with an empty
	// component must be refused as malformed, not quietly turned into
	// another key.
	keyRoutes map[string]map[string]http.HandlerFunc
	// fixedRoutes is the method of each path without a key, for the 405
	// of another method (the ServeMux's catch-all would answer 404).
	fixedRoutes map[string]string
	basic       auth.BasicTokens // tokens of Basic credentials (auth.go)
	// bodyTimeout bounds the wait for a request's body (body.go).
	bodyTimeout time.Duration
}

// New returns the handler for c. maxValue bounds the body a put reads (the
// store's value limit, so a bigger one is refused by the server with its
// limit error, not cut short).
func New(c *client.Client, maxValue int64) *Handler {
	h := &Handler{c: c, mux: http.NewServeMux(), maxValue: maxValue, bodyTimeout: DefaultBodyTimeout}
	h.keyRoutes = map[string]map[string]http.HandlerFunc{
		"/v1/kv/":    {"GET": h.get, "PUT": h.put, "DELETE": h.delete},
		"/v1/multi/": {"GET": h.multiGet, "DELETE": h.multiDelete},
	}
	h.fixedRoutes = map[string]string{}
	for _, rt := range []struct {
		method, path string
		f            http.HandlerFunc
	}{
		{"POST", "/v1/execute", h.execute},
		{"POST", "/v1/login", h.login},
		{"GET", "/v1/store", h.store},
		{"GET", "/v1/scan", h.scan},
		{"GET", "/openapi.json", serveOpenAPI},
	} {
		h.mux.HandleFunc(rt.method+" "+rt.path, rt.f)
		h.fixedRoutes[rt.path] = rt.method
	}
	h.mux.HandleFunc("/", h.notFound)
	return h
}

// openAPI is the API's OpenAPI 3.1 document (openapi.json, checked in).
//
//go:embed openapi.json
var openAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPI)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r); err != nil {
		writeError(w, err)
		return
	}
	ctx, refused, err := h.withCredentials(r)
	if err != nil {
		writeError(w, err)
		return
	}
	r = r.WithContext(ctx)
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if sw.status == http.StatusUnauthorized {
			refused()
		}
	}()
	w = sw
	for prefix, methods := range h.keyRoutes {
		if !strings.HasPrefix(r.URL.Path, prefix) {
			continue
		}
		if f, ok := methods[r.Method]; ok {
			f(w, r)
			return
		}
		methodNotAllowed(w, r, prefix+"{key}", slices.Sorted(maps.Keys(methods)))
		return
	}
	h.mux.ServeHTTP(w, r)
}

// methodNotAllowed answers a request whose method path does not take.
func methodNotAllowed(w http.ResponseWriter, r *http.Request, path string, allowed []string) {
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	writeJSON(w, http.StatusMethodNotAllowed, map[string]errorJSON{"error": {Code: "MethodNotAllowed", Kind: "method_not_allowed",
		Action: client.ActionFixInput.String(), Message: r.Method + " is not allowed on " + path + ": use " + strings.Join(allowed, ", ")}})
}

// notFound answers what no route took: a fixed endpoint asked with another
// method (405), or a path that is not the API's (404).
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	if m, ok := h.fixedRoutes[r.URL.Path]; ok {
		methodNotAllowed(w, r, r.URL.Path, []string{m})
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]errorJSON{"error": {Code: "NotFound", Kind: "no_such_endpoint", Action: client.ActionFixInput.String(),
		Message: r.Method + " " + r.URL.Path + " is not part of the API: GET, PUT or DELETE /v1/kv/{key}, GET or DELETE /v1/multi/{parent}, POST /v1/execute, GET /v1/scan, GET /v1/store, POST /v1/login, GET /openapi.json"}})
}

// get answers GET /v1/kv/{key}: 200 with the record, 404 if there is none.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	_, k, opts, err := keyRequest(r, "/v1/kv", false)
	if err != nil {
		writeError(w, err)
		return
	}
	rec, found, err := h.c.Get(r.Context(), k, opts...)
	switch {
	case err != nil:
		writeError(w, err)
	case !found:
		writeJSON(w, http.StatusNotFound, map[string]errorJSON{"error": {Code: "NotFound", Kind: "not_found",
			Action: client.ActionNone.String(), Message: "no record under " + k.String()}})
	default:
		writeJSON(w, http.StatusOK, cli.ToJSON(rec, false))
	}
}

// A write's answer:
//
//	{"key": "/users/alice/-/email", "done": true, "version": "0a0b..."}
type writeJSONBody struct {
	Key      string          `json:"key"`
	Done     bool            `json:"done"`
	Version  string          `json:"version,omitempty"`
	Previous *cli.RecordJSON `json:"previous,omitempty"`
}

func resultJSON(k client.Key, res client.Result) writeJSONBody {
	b := writeJSONBody{Key: k.String(), Done: res.Done}
	if len(res.Version) > 0 {
		b.Version = res.Version.String()
	}
	if res.Previous != nil {
		j := cli.ToJSON(*res.Previous, false)
		b.Previous = &j
	}
	return b
}

// put answers PUT /v1/kv/{key}: 200 with the new version, or 412 when the
// ?if= condition did not hold (nothing written).
func (h *Handler) put(w http.ResponseWriter, r *http.Request) {
	p, k, opts, err := keyRequest(r, "/v1/kv", true)
	if err != nil {
		writeError(w, err)
		return
	}
	cond, match, err := p.condition(false)
	if err != nil {
		writeError(w, err)
		return
	}
	v, err := h.readValue(w, r, h.maxValue)
	if err != nil {
		writeError(w, err)
		return
	}
	res, err := h.write(r.Context(), k, v, cond, match, opts)
	answerWrite(w, k, res, err)
}

func (h *Handler) write(ctx context.Context, k client.Key, v []byte, cond string, match client.Version, opts []client.Option) (client.Result, error) {
	switch cond {
	case "absent":
		return h.c.PutIfAbsent(ctx, k, v, opts...)
	case "present":
		return h.c.PutIfPresent(ctx, k, v, opts...)
	case "version":
		return h.c.PutIfVersion(ctx, k, v, match, opts...)
	}
	ver, err := h.c.Put(ctx, k, v, opts...)
	return client.Result{Done: err == nil, Version: ver}, err
}

// delete answers DELETE /v1/kv/{key}: 200 with done true if a record was
// deleted, false if there was none; 412 when ?if=version= did not match.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	p, k, opts, err := keyRequest(r, "/v1/kv", true)
	if err == nil {
		err = p.noTTL()
	}
	if err != nil {
		writeError(w, err)
		return
	}
	cond, match, err := p.condition(true)
	if err != nil {
		writeError(w, err)
		return
	}
	var res client.Result
	if cond == "version" {
		res, err = h.c.DeleteIfVersion(r.Context(), k, match, opts...)
	} else {
		res, err = h.c.Delete(r.Context(), k, opts...)
		if err == nil && !res.Done {
			writeJSON(w, http.StatusOK, resultJSON(k, res)) // nothing to delete is not a failed condition
			return
		}
	}
	answerWrite(w, k, res, err)
}

// answerWrite answers a write: its result, 412 for a condition that did
// not hold, or the error.
func answerWrite(w http.ResponseWriter, k client.Key, res client.Result, err error) {
	switch {
	case err != nil:
		writeError(w, err)
	case !res.Done:
		writeJSON(w, http.StatusPreconditionFailed, resultJSON(k, res))
	default:
		writeJSON(w, http.StatusOK, resultJSON(k, res))
	}
}

// The store's description:
//
//	{"store": "kvstore", "partitions": 100, "topology_seq": 3, "server_version": "...",
//	 "limits": {"max_key_bytes": 10240, "max_value_bytes": 4194304, "max_components": 64,
//	            "max_timeout_ms": 300000, "max_result_bytes": 33554432}}
func (h *Handler) store(w http.ResponseWriter, r *http.Request) {
	opts, err := params{r.URL.Query()}.options(false)
	if err != nil {
		writeError(w, err)
		return
	}
	si, err := h.c.StoreInfo(r.Context(), opts...)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"store": si.Store, "partitions": si.Partitions, "topology_seq": si.TopologySeq, "server_version": si.ServerVersion,
		"limits": map[string]any{"max_key_bytes": si.Limits.MaxKeyBytes, "max_value_bytes": si.Limits.MaxValueBytes,
			"max_components": si.Limits.MaxComponents, "max_timeout_ms": si.Limits.MaxTimeout.Milliseconds(),
			"max_result_bytes": si.Limits.MaxResultBytes},
	})
}
