package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairndb/cairn/internal/admin"
	"github.com/cairndb/cairn/internal/node"
	"github.com/cairndb/cairn/internal/storage/files"
)

// prepareRejoin asks the admin, through helpers, for what storage node
// rejoinAs was, and writes it into root (node.WriteRejoinRoot).
func prepareRejoin(ctx context.Context, fs files.FS, root, rejoinAs string, helpers []string) error {
	if len(helpers) == 0 {
		return usageErr("--rejoin-as needs --helper-hosts HOST:PORT,...: running storage nodes of the store, to ask the admin")
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
	r, err := c.Call(ctx, "show rejoin-config", map[string]string{"sn": rejoinAs})
	if err != nil {
		return fmt.Errorf("--rejoin-as %s: %s", rejoinAs, admin.Message(err))
	}
	var rc admin.RejoinConfig
	if err := json.Unmarshal(r.GetJson(), &rc); err != nil {
		return fmt.Errorf("--rejoin-as %s: the admin's answer is unreadable: %v", rejoinAs, err)
	}
	if err := node.WriteRejoinRoot(fs, root, rc); err != nil {
		return usageErr("--rejoin-as %s: %v", rejoinAs, err)
	}
	fmt.Printf("cairn sn: %s is sn%d of store %q at %s:%d; its replicas rejoin and catch up from their leaders\n", root, rc.SN, rc.Store, rc.Host, rc.Port)
	return nil
}
