package client

// AttemptsByAddr returns, per node address, how many requests c has sent
// there (cluster tests check how reads spread).
func AttemptsByAddr(c *Client) map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.pools))
	for addr, p := range c.pools {
		out[addr] = p.attempts.Load()
	}
	return out
}

// HomeAddr returns the address of c's home replica (home.go) for the shard
// of k's major path.
func HomeAddr(c *Client, k Key) string {
	t := c.cl.topology()
	sh, _ := t.Shard(t.ShardForKey(k.Major))
	n, _ := t.Node(c.readOrder().append(nil, sh.Replicas)[0])
	return n.Addr
}
