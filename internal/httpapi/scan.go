package httpapi

import (
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/cairndb/cairn/internal/cli"
)

// maxScanLimit bounds the records of one scan page.
const maxScanLimit = 10000

// scan answers GET /v1/scan: one page of the records of the whole store
// (or of the major paths under ?parent=, selected by ?depth= and the range
// parameters), in no particular order across partitions:
//
//	GET /v1/scan?parent=/users&limit=100
//	{"records": [...], "cursor": "AAAAAAAAAAE..."}
//	GET /v1/scan?parent=/users&limit=100&cursor=AAAAAAAAAAE...
//	{"records": [...]}                                  no cursor: the last page
//
// The cursor is opaque (base64url); the pages are separate reads, so a
// scan is not one snapshot.
func (h *Handler) scan(w http.ResponseWriter, r *http.Request) {
	p := params{r.URL.Query()}
	opts, err := p.options(false)
	if err != nil {
		writeError(w, err)
		return
	}
	parent, err := cli.ParseParent(p.q.Get("parent"))
	if err != nil {
		writeError(w, asBadRequest(err))
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
	limit := 100
	if s := p.q.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > maxScanLimit {
			writeError(w, badRequestf("limit: %q is not a page size from 1 to %d", s, maxScanLimit))
			return
		}
	}
	var cursor []byte
	if s := p.q.Get("cursor"); s != "" {
		if cursor, err = base64.RawURLEncoding.DecodeString(s); err != nil {
			writeError(w, badRequestf("cursor: %q is not a cursor a page returned", s))
			return
		}
	}
	recs, next, err := h.c.StoreScanPage(r.Context(), cursor, limit, parent, kr, depth, keysOnly, opts...)
	if err != nil {
		writeError(w, err)
		return
	}
	out := struct {
		Records []cli.RecordJSON `json:"records"`
		Cursor  string           `json:"cursor,omitempty"`
	}{Records: make([]cli.RecordJSON, len(recs))}
	for i, rec := range recs {
		out.Records[i] = cli.ToJSON(rec, keysOnly)
	}
	if next != nil {
		out.Cursor = base64.RawURLEncoding.EncodeToString(next)
	}
	writeJSON(w, http.StatusOK, out)
}
