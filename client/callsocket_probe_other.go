//go:build !unix

package client

// alive cannot peek at a socket here: a link that died while idle is
// found by its next call.
func alive(*pipeLink) bool { return true }
