package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/client"
)

// An execute request, all of whose operations share one major path and
// are applied atomically:
//
//	POST /v1/execute?durability=sync
//	{"operations": [
//	  {"op": "put", "key": "/users/alice/-/email", "value": "alice@example.com", "if": "absent"},
//	  {"op": "put", "key": "/users/alice/-/photo", "value_base64": "iVBORw0KGgo=", "ttl": "24h"},
//	  {"op": "delete", "key": "/users/alice/-/old", "if": "version=0a0b", "abort_if_unsuccessful": true}]}
//
// answered with one result per operation, in order: {"results": [{"key":
// ..., "done": true, "version": ...}, ...]}. An operation marked
// abort_if_unsuccessful that is not done aborts the batch: 409 with the
// error's "index", nothing written.
type executeJSON struct {
	Operations []opJSON `json:"operations"`
}

type opJSON struct {
	Op          string  `json:"op"`
	Key         string  `json:"key"`
	Value       *string `json:"value,omitempty"`
	ValueBase64 *string `json:"value_base64,omitempty"`
	If          string  `json:"if,omitempty"`
	TTL         string  `json:"ttl,omitempty"`
	Abort       bool    `json:"abort_if_unsuccessful,omitempty"`
}

// maxExecuteBody bounds an execute request's JSON.
const maxExecuteBody = 64 << 20

func (h *Handler) execute(w http.ResponseWriter, r *http.Request) {
	opts, err := params{r.URL.Query()}.options(true)
	if err != nil {
		writeError(w, err)
		return
	}
	req, err := h.decodeExecute(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(req.Operations) == 0 {
		writeError(w, badRequestf("operations: the list is empty; give at least one"))
		return
	}
	ops := make([]client.Op, len(req.Operations))
	for i, o := range req.Operations {
		if ops[i], err = o.toOp(); err != nil {
			writeError(w, atOperation(i, err))
			return
		}
	}
	results, err := h.c.Execute(r.Context(), ops, opts...)
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]writeJSONBody, len(results))
	for i, res := range results {
		out[i] = resultJSON(ops[i].Key(), res)
	}
	writeJSON(w, http.StatusOK, map[string][]writeJSONBody{"results": out})
}

// decodeExecute reads an execute request's body: one JSON object of at
// most maxExecuteBody bytes, and nothing after it.
func (h *Handler) decodeExecute(w http.ResponseWriter, r *http.Request) (executeJSON, error) {
	var req executeJSON
	done := h.bodyDeadline(w)
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxExecuteBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(&req)
	if err == nil {
		if _, next := dec.Token(); next != io.EOF {
			err = errors.New("more follows the request's JSON object; send one request per POST")
		}
	}
	done(err)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return req, &client.Error{Code: codes.InvalidArgument, Kind: client.KindLimitExceeded, Action: client.ActionFixInput,
			Limit: "max_execute_body", Max: tooBig.Limit,
			Msg: fmt.Sprintf("the execute request's body is over %d MiB: send its operations in smaller batches", tooBig.Limit>>20)}
	case err != nil:
		return req, badRequestf("the body is not an execute request ({\"operations\": [...]}): %v", h.readErr(err))
	}
	return req, nil
}

// atOperation names operation i in err, keeping a client error's kind
// (malformed_key, limit_exceeded) and action.
func atOperation(i int, err error) error {
	var ce *client.Error
	if errors.As(err, &ce) {
		e := *ce
		e.Msg = fmt.Sprintf("operations[%d]: %s", i, ce.Msg)
		return &e
	}
	return badRequestf("operations[%d]: %v", i, err)
}

// toOp builds the client operation o describes.
func (o opJSON) toOp() (client.Op, error) {
	if o.Op != "put" && o.Op != "delete" {
		return client.Op{}, badRequestf("op: %q is not an operation (want put or delete)", o.Op)
	}
	k, err := client.ParseKey(o.Key)
	if err != nil {
		return client.Op{}, err
	}
	var cond string
	var match client.Version
	if o.If != "" {
		q := params{map[string][]string{"if": {o.If}}}
		if cond, match, err = q.condition(o.Op == "delete"); err != nil {
			return client.Op{}, err
		}
	}
	var op client.Op
	switch o.Op {
	case "delete":
		if o.Value != nil || o.ValueBase64 != nil || o.TTL != "" {
			return op, badRequestf("a delete takes no value and no ttl")
		}
		op = client.OpDelete(k)
		if cond == "version" {
			op = client.OpDeleteIfVersion(k, match)
		}
	case "put":
		v, err := o.value()
		if err != nil {
			return op, err
		}
		switch cond {
		case "absent":
			op = client.OpPutIfAbsent(k, v)
		case "present":
			op = client.OpPutIfPresent(k, v)
		case "version":
			op = client.OpPutIfVersion(k, v, match)
		default:
			op = client.OpPut(k, v)
		}
		if o.TTL != "" {
			d, err := time.ParseDuration(o.TTL)
			if err != nil || d < 0 {
				return op, badRequestf("ttl: %q is not a duration like 1h30m", o.TTL)
			}
			op = op.TTL(d)
		}
	default:
		return op, badRequestf("op: %q is not an operation (want put or delete)", o.Op)
	}
	if o.Abort {
		op = op.AbortIfUnsuccessful()
	}
	return op, nil
}

// value returns a put's value: "value" as UTF-8 text, or "value_base64".
func (o opJSON) value() ([]byte, error) {
	switch {
	case o.Value != nil && o.ValueBase64 != nil:
		return nil, badRequestf("give value or value_base64, not both")
	case o.Value != nil:
		return []byte(*o.Value), nil
	case o.ValueBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*o.ValueBase64)
		if err != nil {
			return nil, badRequestf("value_base64: %v", err)
		}
		return b, nil
	}
	return nil, badRequestf("a put needs value (UTF-8 text) or value_base64")
}
