package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/cairndb/cairn/client"
)

// Credentials on a secure node (docs/design/20261127_security.md §5): a
// request carries "Authorization: Bearer TOKEN" (a token from POST
// /v1/login) or "Authorization: Basic ..." (user and password: the handler
// logs in once and keeps the token for two thirds of its life, keyed by a
// hash of the pair). Either way the token goes on with the request to the
// node, which checks it and the user's role as it checks a gRPC caller's.
// A request without credentials reaches the node without a token, and a
// secure node refuses it (401, kind login_required).

// basicCache holds the tokens of Basic credentials.
type basicCache struct {
	mu sync.Mutex
	m  map[[32]byte]cachedToken
}

type cachedToken struct {
	token string
	until time.Time
}

const maxCachedLogins = 1024

// withCredentials returns r's context carrying r's token, or an error to
// answer (a failed Basic login).
func (h *Handler) withCredentials(r *http.Request) (context.Context, error) {
	ctx := r.Context()
	a := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(a, "Bearer "); ok {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+strings.TrimSpace(tok)), nil
	}
	user, pw, ok := r.BasicAuth()
	if !ok {
		return ctx, nil
	}
	tok, err := h.basicToken(ctx, user, pw)
	if err != nil {
		return ctx, err
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok), nil
}

func (h *Handler) basicToken(ctx context.Context, user, pw string) (string, error) {
	k := sha256.Sum256([]byte(user + "\x00" + pw))
	now := time.Now()
	h.basic.mu.Lock()
	if t, ok := h.basic.m[k]; ok && now.Before(t.until) {
		h.basic.mu.Unlock()
		return t.token, nil
	}
	h.basic.mu.Unlock()
	tok, exp, _, err := h.c.Login(ctx, user, pw)
	if err != nil {
		return "", err
	}
	h.basic.mu.Lock()
	defer h.basic.mu.Unlock()
	if h.basic.m == nil || len(h.basic.m) >= maxCachedLogins {
		h.basic.m = make(map[[32]byte]cachedToken)
	}
	h.basic.m[k] = cachedToken{token: tok, until: now.Add(exp.Sub(now) * 2 / 3)}
	return tok, nil
}

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
