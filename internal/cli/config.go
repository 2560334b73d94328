package cli

import (
	"context"
	"strings"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/auth"
)

// Globals are the flags every kv command takes.
type Globals struct {
	Hosts       []string      // --hosts: host:port of one or more nodes
	Store       string        // --store: the store's name
	Timeout     time.Duration // --timeout: per operation (per page for scans)
	JSON        bool          // --json: print JSON instead of text
	Durability  string        // --durability: MASTER[,REPLICA] sync policy; "" = default
	Ack         string        // --ack: replica ack policy; "" = default
	Consistency string        // --consistency: read consistency; "" = default
	Security    string        // --security: a login file (secure mode); "" = plaintext
}

// DefaultGlobals returns the flag defaults.
func DefaultGlobals() Globals {
	return Globals{Hosts: []string{"127.0.0.1:5000"}, Store: "kvstore", Timeout: client.DefaultTimeout}
}

// Config turns the flags into a client config, rejecting bad values as
// usage errors.
func (g Globals) Config() (client.Config, error) {
	var hosts []string
	for _, h := range g.Hosts {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		return client.Config{}, Usagef("--hosts: no host given (want host:port[,host:port...])")
	}
	if g.Store == "" {
		return client.Config{}, Usagef("--store: empty store name")
	}
	if g.Timeout <= 0 {
		return client.Config{}, Usagef("--timeout: %v is not positive", g.Timeout)
	}
	d, err := ParseDurability(g.Durability, g.Ack)
	if err != nil {
		return client.Config{}, err
	}
	c, err := ParseConsistency(g.Consistency)
	if err != nil {
		return client.Config{}, err
	}
	cfg := client.Config{Hosts: hosts, Store: g.Store, Timeout: g.Timeout, Durability: d, Consistency: c, Conns: 1}
	if g.Security != "" {
		l, err := auth.ReadLogin(g.Security)
		if err != nil {
			return client.Config{}, Usagef("--security: %v", err)
		}
		if cfg.TLS, err = l.TLS(); err != nil {
			return client.Config{}, Usagef("--security: %v", err)
		}
		if cfg.Password, err = l.Password(); err != nil {
			return client.Config{}, Usagef("--security: %v", err)
		}
		cfg.User = l.User
	}
	return cfg, nil
}

// Open parses the flags and connects.
func (g Globals) Open(ctx context.Context) (*client.Client, error) {
	cfg, err := g.Config()
	if err != nil {
		return nil, err
	}
	return client.Open(ctx, cfg)
}
