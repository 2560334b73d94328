package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/client"
)

// DefaultBodyTimeout bounds how long a request's body may take to arrive
// once its headers have (Handler.bodyTimeout): a client that announces a
// body and sends it slowly, or not at all, holds a connection and a handler
// no longer than this. 4 MiB in 30 s is 140 KB/s.
const DefaultBodyTimeout = 30 * time.Second

// bodyDeadline makes the connection's reads of the request's body fail
// after h.bodyTimeout, and returns the function to call once the body is
// read, with the read's error. After a whole body it lifts the deadline:
// net/http reads the connection in the background while the handler runs,
// to see the client go away, and a deadline that passed there would cancel
// the request. After a failed read it leaves the deadline, so that the
// server's drain of the unread body fails too and the connection closes
// instead of waiting for bytes that may never come. (The server sets the
// connection's deadline itself before it reads the next request.)
func (h *Handler) bodyDeadline(w http.ResponseWriter) (done func(error)) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.bodyTimeout))
	return func(err error) {
		if err == nil {
			_ = rc.SetReadDeadline(time.Time{})
		}
	}
}

// readValue reads a put's body, the value: at most max bytes. A body over
// the limit is refused as limit_exceeded, naming its size when the request
// announced it (Content-Length). Up to max+1 bytes of it are read first, so
// that a client which sends the whole body before it reads the answer does
// not find the connection closed under it for the usual sizes.
func (h *Handler) readValue(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	done := h.bodyDeadline(w)
	v, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	done(err)
	switch {
	case err != nil:
		return nil, badRequestf("reading the value: %v", h.readErr(err))
	case int64(len(v)) <= max:
		return v, nil
	case r.ContentLength > max:
		return nil, valueTooLarge(max, strconv.FormatInt(r.ContentLength, 10), r.ContentLength)
	}
	return nil, valueTooLarge(max, "more than "+strconv.FormatInt(max, 10), 0)
}

func valueTooLarge(max int64, seen string, n int64) error {
	return &client.Error{Code: codes.InvalidArgument, Kind: client.KindLimitExceeded, Action: client.ActionFixInput,
		Limit: "max_value_bytes", Max: max, Seen: n,
		Msg: fmt.Sprintf("value is %s bytes; the store's limit max_value_bytes is %d (the node's --max-value-bytes)", seen, max)}
}

// readErr says what a failed body read means to the sender.
func (h *Handler) readErr(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("the body did not arrive within %v of the headers", h.bodyTimeout)
	}
	return err
}
