package client

import "time"

// Option adjusts one operation. Options an operation does not use are
// ignored: durability and the return choice apply to writes, consistency to
// reads, TTL to puts.
type Option func(*options)

// options is the resolved per-operation settings: the Config's defaults with
// the operation's Options applied in order.
type options struct {
	timeout     time.Duration
	durability  Durability
	consistency Consistency
	ttl         time.Duration
	ttlSet      bool
	ret         ReturnValueVersion
	retSet      bool
}

// WithTimeout bounds the operation (each page, for an iterator). The
// deadline is the earlier of the context's and now+d. d <= 0 keeps the
// Config's Timeout.
func WithTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// WithDurability sets a write's durability. A zero field keeps the Config's
// value for that field.
func WithDurability(d Durability) Option {
	return func(o *options) { o.durability = d.or(o.durability) }
}

// WithConsistency sets a read's consistency. The zero Consistency keeps the
// Config's.
func WithConsistency(c Consistency) Option {
	return func(o *options) {
		if !c.IsZero() {
			o.consistency = c
		}
	}
}

// WithTTL makes a put's record expire d after the write, with millisecond
// precision (a positive d is rounded up). 0 means it never expires, which is
// also the default. In Execute it applies to the puts that set no TTL of
// their own.
func WithTTL(d time.Duration) Option {
	return func(o *options) { o.ttl, o.ttlSet = d, true }
}

// WithReturn chooses what a write returns about the record it replaced or
// deleted, in Result.Previous. The default is ReturnNone. In Execute it
// applies to the ops that set no Return of their own.
func WithReturn(r ReturnValueVersion) Option {
	return func(o *options) { o.ret, o.retSet = r, true }
}

// resolve returns the settings for one operation.
func (cfg *Config) resolve(opts []Option) options {
	o := options{
		timeout:     cfg.Timeout,
		durability:  cfg.Durability,
		consistency: cfg.Consistency,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}
