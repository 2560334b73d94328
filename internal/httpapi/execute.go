package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"

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
	var req executeJSON
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxExecuteBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, badRequestf("the body is not an execute request ({\"operations\": [...]}): %v", err))
		return
	}
	if len(req.Operations) == 0 {
		writeError(w, badRequestf("operations: the list is empty; give at least one"))
		return
	}
	ops := make([]client.Op, len(req.Operations))
	for i, o := range req.Operations {
		if ops[i], err = o.toOp(); err != nil {
			writeError(w, badRequestf("operations[%d]: %v", i, err))
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
