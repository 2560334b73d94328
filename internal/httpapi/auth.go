package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/cairndb/cairn/client"
)

// Credentials on a secure node (docs/design/20261127_security.md §5): a
// request carries "Authorization: Bearer TOKEN" (a token from POST
// /v1/login) or "Authorization: Basic ..." (user and password: the handler
// logs in once and keeps the token, auth.BasicTokens). Either way the
// token goes on with the request to the node, which checks it and the
// user's role as it checks a gRPC caller's. A request without credentials
// reaches the node without a token, and a secure node refuses it (401,
// kind login_required). A cached Basic token the node refuses (401: the
// user was changed or removed since the login) is forgotten, so the next
// request logs in again.

// withCredentials returns r's context carrying r's token, or an error to
// answer (a failed Basic login), and what to do if the node refuses the
// token (forget a cached Basic token; nothing for a Bearer token).
func (h *Handler) withCredentials(r *http.Request) (context.Context, func(), error) {
	ctx := r.Context()
	a := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(a, "Bearer "); ok {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+strings.TrimSpace(tok)), func() {}, nil
	}
	user, pw, ok := r.BasicAuth()
	if !ok {
		return ctx, func() {}, nil
	}
	tok, err := h.basic.Token(ctx, user, pw, func(ctx context.Context, user, pw string) (string, time.Time, error) {
		tok, exp, _, err := h.c.Login(ctx, user, pw)
		return tok, exp, err
	})
	if err != nil {
		return ctx, nil, err
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok), func() { h.basic.Forget(user, pw) }, nil
}

// statusWriter remembers the status of the answer it carries. Unwrap lets
// http.ResponseController reach the connection (body.go's deadlines).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// login answers POST /v1/login {"user": ..., "password": ...} with
// {"token": ..., "expires_at_ms": ..., "role": ...}.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	var req struct {
		User     string `json:"user"`
		Password string `json:"password"`
	}
	done := h.bodyDeadline(w)
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req)
	done(err)
	if err != nil || req.User == "" {
		writeError(w, &client.Error{Code: codes.InvalidArgument, Kind: "invalid_argument", Action: client.ActionFixInput,
			Msg: `POST /v1/login takes {"user": "...", "password": "..."}`})
		return
	}
	tok, exp, role, err := h.c.Login(r.Context(), req.User, req.Password)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"token": tok, "expires_at_ms": exp.UnixMilli(), "role": role})
}
