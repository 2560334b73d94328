package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/admin"
	"github.com/cairndb/cairn/internal/node"
	"github.com/cairndb/cairn/internal/shell"
	"github.com/cairndb/cairn/internal/storage/files"
)

// prepareRejoin asks the admin, through helpers, for what storage node
// rejoinAs was, and writes it into root (node.WriteRejoinRoot). A
// malformed id or helper is a usage error found before any node is asked;
// the admin's refusal keeps its exit code: 2 for an id the store does not
// have, 3 when no helper answered.
func prepareRejoin(ctx context.Context, fs files.FS, root, rejoinAs string, helpers []string) error {
	id, err := checkRejoinArgs(rejoinAs, helpers)
	if err != nil {
		return err
	}
	c, err := admin.Dial(helpers)
	if err != nil {
		return usageErr("--helper-hosts: %v", err)
	}
	defer c.Close()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := c.Call(ctx, "show rejoin-config", map[string]string{"sn": id})
	if err != nil {
		return &exitError{code: shell.ExitCode(err), err: fmt.Errorf("--rejoin-as %s: %s", id, admin.Message(err))}
	}
	var rc admin.RejoinConfig
	if err := json.Unmarshal(r.GetJson(), &rc); err != nil {
		return fmt.Errorf("--rejoin-as %s: the admin's answer is unreadable: %v", id, err)
	}
	if err := node.WriteRejoinRoot(fs, root, rc); err != nil {
		return usageErr("--rejoin-as %s: %v", id, err)
	}
	fmt.Printf("cairn sn: %s is sn%d of store %q at %s:%d; its replicas rejoin and catch up from their leaders\n", root, rc.SN, rc.Store, rc.Host, rc.Port)
	return nil
}

// checkRejoinArgs checks --rejoin-as (snN or N) and --helper-hosts
// (HOST:PORT,...) and returns the id as snN.
func checkRejoinArgs(rejoinAs string, helpers []string) (string, error) {
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(rejoinAs)), "sn"), 10, 64)
	if err != nil || n == 0 {
		return "", usageErr("--rejoin-as %q: want the storage node id the lost node had, as sn3 or 3 (show topology lists them)", rejoinAs)
	}
	if len(helpers) == 0 {
		return "", usageErr("--rejoin-as needs --helper-hosts HOST:PORT,...: running storage nodes of the store, to ask the admin")
	}
	for _, h := range helpers {
		if _, port, err := net.SplitHostPort(h); err != nil || port == "" {
			return "", usageErr("--helper-hosts %q: want HOST:PORT of a running storage node of the store, e.g. 127.0.0.1:5000", h)
		}
	}
	return "sn" + strconv.FormatUint(n, 10), nil
}
