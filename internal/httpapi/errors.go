package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/client"
)

// An error answer:
//
//	HTTP/1.1 413 Request Entity Too Large
//	{"error": {"code": "InvalidArgument", "kind": "limit_exceeded", "action": "FIX_INPUT",
//	           "message": "...", "limit": "max_value_bytes", "max": 4194304, "seen": 5000000}}
type errorJSON struct {
	Code         string `json:"code"`
	Kind         string `json:"kind,omitempty"`
	Action       string `json:"action"`
	Message      string `json:"message"`
	MaybeApplied bool   `json:"maybe_applied,omitempty"`
	Limit        string `json:"limit,omitempty"`
	Max          int64  `json:"max,omitempty"`
	Seen         int64  `json:"seen,omitempty"`
	Index        *int   `json:"index,omitempty"` // execute: the operation that aborted the batch
}

// httpStatus is the HTTP status of a gRPC code.
var httpStatus = map[codes.Code]int{
	codes.InvalidArgument:    http.StatusBadRequest,
	codes.NotFound:           http.StatusNotFound,
	codes.AlreadyExists:      http.StatusConflict,
	codes.FailedPrecondition: http.StatusPreconditionFailed,
	codes.Aborted:            http.StatusConflict,
	codes.ResourceExhausted:  http.StatusTooManyRequests,
	codes.Unavailable:        http.StatusServiceUnavailable,
	codes.DeadlineExceeded:   http.StatusGatewayTimeout,
	codes.Canceled:           499, // nginx's "client closed request"
	codes.Unauthenticated:    http.StatusUnauthorized,
	codes.PermissionDenied:   http.StatusForbidden,
	codes.Unimplemented:      http.StatusNotImplemented,
}

// statusOf picks the HTTP status of a client error: by kind where the code
// alone would mislead, else by code (500 when unmapped).
func statusOf(e *client.Error) int {
	switch e.Kind {
	case client.KindLimitExceeded:
		return http.StatusRequestEntityTooLarge
	case client.KindDiskFull:
		return http.StatusInsufficientStorage
	case client.KindNotSecure:
		return http.StatusBadRequest
	}
	if s, ok := httpStatus[e.Code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// badRequest is an error in the HTTP request itself (a bad query
// parameter, a body that is not the JSON asked for).
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badRequestf(format string, args ...any) error {
	return &badRequest{fmt.Sprintf(format, args...)}
}

// writeError answers err.
func writeError(w http.ResponseWriter, err error) {
	status, body := errorBody(err)
	writeJSON(w, status, map[string]errorJSON{"error": body})
}

// errorBody returns the HTTP status and the JSON of err.
func errorBody(err error) (int, errorJSON) {
	var ce *client.Error
	var ee *client.ExecutionError
	var br *badRequest
	body := errorJSON{Code: codes.Internal.String(), Action: client.ActionNone.String(), Message: err.Error()}
	status := http.StatusInternalServerError
	switch {
	case errors.As(err, &br):
		body = errorJSON{Code: codes.InvalidArgument.String(), Kind: "bad_request", Action: client.ActionFixInput.String(), Message: br.msg}
		status = http.StatusBadRequest
	case errors.As(err, &ee):
		i := ee.Index
		body = errorJSON{Code: codes.Aborted.String(), Kind: "execute_aborted", Action: client.ActionNone.String(), Message: ee.Error(), Index: &i}
		status = http.StatusConflict
	case errors.As(err, &ce):
		body = errorJSON{Code: ce.Code.String(), Kind: ce.Kind, Action: ce.Action.String(), Message: ce.Msg,
			MaybeApplied: ce.MaybeApplied, Limit: ce.Limit, Max: ce.Max, Seen: ce.Seen}
		status = statusOf(ce)
	}
	return status, body
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
