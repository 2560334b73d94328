package httpapi

import (
	"encoding/json"
	"iter"
	"net/http"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/cli"
)

// multiGet answers GET /v1/multi/{parent}: the records under the parent
// selected by ?depth= and the range parameters, in key order (?reverse for
// descending), streamed as they are read:
//
//	{"records": [{"key": ..., "value": ..., "version": ...}, ...]}
//
// ?keys_only returns keys alone. A failure before the first record is an
// error answer; one after it ends the array and adds "error", since the
// status (200) is already sent.
func (h *Handler) multiGet(w http.ResponseWriter, r *http.Request) {
	p, parent, opts, err := keyRequest(r, "/v1/multi", false)
	if err != nil {
		writeError(w, err)
		return
	}
	kr, depth, err := p.selection()
	if err != nil {
		writeError(w, err)
		return
	}
	keysOnly, err := p.flag("keys_only")
	if err != nil {
		writeError(w, err)
		return
	}
	reverse, err := p.flag("reverse")
	if err != nil {
		writeError(w, err)
		return
	}
	dir := client.Forward
	if reverse {
		dir = client.Reverse
	}
	var recs iter.Seq2[client.Record, error]
	if keysOnly {
		recs = func(yield func(client.Record, error) bool) {
			for k, err := range h.c.MultiGetKeysIterator(r.Context(), dir, 0, parent, kr, depth, opts...) {
				if !yield(client.Record{Key: k}, err) {
					return
				}
			}
		}
	} else {
		recs = h.c.MultiGetIterator(r.Context(), dir, 0, parent, kr, depth, opts...)
	}
	streamRecords(w, recs, keysOnly)
}

// streamRecords writes {"records": [...]} from recs as they come.
func streamRecords(w http.ResponseWriter, recs iter.Seq2[client.Record, error], keysOnly bool) {
	started := false
	start := func() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"records": [`))
		started = true
	}
	n := 0
	for rec, err := range recs {
		if err != nil {
			if !started {
				writeError(w, err)
				return
			}
			_, body := errorBody(err)
			b, _ := json.Marshal(body)
			_, _ = w.Write([]byte("\n], \"error\": "))
			_, _ = w.Write(b)
			_, _ = w.Write([]byte("}\n"))
			return
		}
		if !started {
			start()
		}
		if n > 0 {
			_, _ = w.Write([]byte(","))
		}
		b, _ := json.Marshal(cli.ToJSON(rec, keysOnly))
		_, _ = w.Write([]byte("\n  "))
		_, _ = w.Write(b)
		n++
	}
	if !started {
		start()
	}
	_, _ = w.Write([]byte("\n]}\n"))
}

// multiDelete answers DELETE /v1/multi/{parent}: deletes the records the
// selection names, atomically (they share the parent's major path), and
// says how many: {"deleted": 3}.
func (h *Handler) multiDelete(w http.ResponseWriter, r *http.Request) {
	p, parent, opts, err := keyRequest(r, "/v1/multi", true)
	if err == nil {
		err = p.noTTL()
	}
	if err != nil {
		writeError(w, err)
		return
	}
	kr, depth, err := p.selection()
	if err != nil {
		writeError(w, err)
		return
	}
	n, err := h.c.MultiDelete(r.Context(), parent, kr, depth, opts...)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"deleted": n})
}
