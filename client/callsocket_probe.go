//go:build unix

package client

import (
	"crypto/tls"
	"errors"
	"syscall"
)

// alive reports whether l's node has not closed it: a peek at the socket
// that does not wait finds nothing (open and quiet), or bytes (an end
// frame, a TLS record: a reader takes them), but not the end of the stream
// or an error. One system call. The caller checked that l's buffer is
// empty.
func alive(l *pipeLink) bool {
	raw := l.c
	if tc, ok := raw.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	sc, ok := raw.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = true
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if n <= 0 && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EWOULDBLOCK) {
			ok = false // 0 bytes: the end of the stream; or a reset
		}
		return true // never wait for the socket
	})
	return ok && err == nil
}
