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
