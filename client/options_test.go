package client

import (
	"testing"
	"time"
)

func TestConfigWithDefaults(t *testing.T) {
	got := Config{Hosts: []string{"h:1"}, Store: "s"}.WithDefaults()
	if got.Timeout != DefaultTimeout || got.Conns != DefaultConns || got.ConnectTimeout != DefaultConnectTimeout {
		t.Errorf("timeout %v conns %d connect timeout %v, want %v %d %v", got.Timeout, got.Conns, got.ConnectTimeout,
			DefaultTimeout, DefaultConns, DefaultConnectTimeout)
	}
	if got.Durability != DefaultDurability {
		t.Errorf("durability %v, want %v", got.Durability, DefaultDurability)
	}
	if got.Consistency.String() != "NONE_REQUIRED" {
		t.Errorf("consistency %v, want NONE_REQUIRED", got.Consistency)
	}
	// Set fields survive; a partly set durability is completed field-wise.
	got = Config{Timeout: time.Second, Conns: 5, Durability: Durability{ReplicaAck: AckAll}, Consistency: Absolute}.WithDefaults()
	want := Durability{MasterSync: WriteNoSync, ReplicaSync: NoSync, ReplicaAck: AckAll}
	if got.Timeout != time.Second || got.Conns != 5 || got.Durability != want || got.Consistency.String() != "ABSOLUTE" {
		t.Errorf("WithDefaults overwrote set fields: %+v", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"ok", Config{Hosts: []string{"h:1"}, Store: "s"}, true},
		{"no hosts", Config{Store: "s"}, false},
		{"empty host", Config{Hosts: []string{"h:1", ""}, Store: "s"}, false},
		{"no port", Config{Hosts: []string{"127.0.0.1"}, Store: "s"}, false},
		{"port not a number", Config{Hosts: []string{"foo:bar"}, Store: "s"}, false},
		{"port out of range", Config{Hosts: []string{"h:70000"}, Store: "s"}, false},
		{"no host name", Config{Hosts: []string{":5000"}, Store: "s"}, false},
		{"ipv6", Config{Hosts: []string{"[::1]:5000"}, Store: "s"}, true},
		{"no store", Config{Hosts: []string{"h:1"}}, false},
		{"store not UTF-8", Config{Hosts: []string{"h:1"}, Store: "s\xff"}, false},
		{"negative timeout", Config{Hosts: []string{"h:1"}, Store: "s", Timeout: -1}, false},
		{"negative conns", Config{Hosts: []string{"h:1"}, Store: "s", Conns: -1}, false},
		{"negative connect timeout", Config{Hosts: []string{"h:1"}, Store: "s", ConnectTimeout: -1}, false},
	} {
		err := tc.cfg.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !isKind(err, KindInvalidConfig) {
			t.Errorf("%s: error %v is not of kind %s", tc.name, err, KindInvalidConfig)
		}
	}
}

func isKind(err error, kind string) bool {
	e, ok := err.(*Error)
	return ok && e.Kind == kind
}

func TestResolveOptions(t *testing.T) {
	cfg := Config{Hosts: []string{"h:1"}, Store: "s"}.WithDefaults()
	tv := TimeLag(time.Second, 2*time.Second)
	for _, tc := range []struct {
		name string
		opts []Option
		want options
	}{
		{"defaults", nil, options{timeout: DefaultTimeout, durability: DefaultDurability, consistency: NoneRequired}},
		{"nil option ignored", []Option{nil}, options{timeout: DefaultTimeout, durability: DefaultDurability, consistency: NoneRequired}},
		{"timeout", []Option{WithTimeout(time.Minute)},
			options{timeout: time.Minute, durability: DefaultDurability, consistency: NoneRequired}},
		{"non-positive timeout keeps default", []Option{WithTimeout(0), WithTimeout(-time.Second)},
			options{timeout: DefaultTimeout, durability: DefaultDurability, consistency: NoneRequired}},
		{"last timeout wins", []Option{WithTimeout(time.Minute), WithTimeout(time.Hour)},
			options{timeout: time.Hour, durability: DefaultDurability, consistency: NoneRequired}},
		{"durability field-wise", []Option{WithDurability(Durability{MasterSync: Sync})},
			options{timeout: DefaultTimeout, durability: Durability{Sync, NoSync, AckSimpleMajority}, consistency: NoneRequired}},
		{"durability accumulates", []Option{WithDurability(Durability{MasterSync: Sync}), WithDurability(Durability{ReplicaAck: AckNone})},
			options{timeout: DefaultTimeout, durability: Durability{Sync, NoSync, AckNone}, consistency: NoneRequired}},
		{"consistency", []Option{WithConsistency(tv)},
			options{timeout: DefaultTimeout, durability: DefaultDurability, consistency: tv}},
		{"zero consistency keeps default", []Option{WithConsistency(Consistency{})},
			options{timeout: DefaultTimeout, durability: DefaultDurability, consistency: NoneRequired}},
		{"ttl and return", []Option{WithTTL(time.Second), WithReturn(ReturnAll)},
			options{timeout: DefaultTimeout, durability: DefaultDurability, consistency: NoneRequired,
				ttl: time.Second, ttlSet: true, ret: ReturnAll, retSet: true}},
	} {
		got := cfg.resolve(tc.opts)
		if got.timeout != tc.want.timeout || got.durability != tc.want.durability ||
			got.consistency.String() != tc.want.consistency.String() ||
			got.ttl != tc.want.ttl || got.ttlSet != tc.want.ttlSet || got.ret != tc.want.ret || got.retSet != tc.want.retSet {
			t.Errorf("%s: resolve = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestMillis(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 0},
		{time.Nanosecond, 1},
		{time.Millisecond, 1},
		{time.Millisecond + 1, 2},
		{50 * time.Millisecond, 50},
		{-time.Nanosecond, -1},
		{-2 * time.Millisecond, -2},
	} {
		if got := millis(tc.d); got != tc.want {
			t.Errorf("millis(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

func TestConsistencyToPB(t *testing.T) {
	if p := (Consistency{}).toPB(); p != nil {
		t.Errorf("zero consistency toPB = %v, want nil", p)
	}
	p := TimeLag(1500*time.Millisecond, time.Second).toPB()
	if p.GetKind().String() != "CONSISTENCY_KIND_TIME_LAG" || p.GetPermissibleLagMs() != 1500 || p.GetTimeoutMs() != 1000 {
		t.Errorf("TimeLag toPB = %v", p)
	}
	p = AtVersion(Version{1, 2}, 0).toPB()
	if p.GetKind().String() != "CONSISTENCY_KIND_VERSION" || string(p.GetVersion()) != "\x01\x02" || p.GetTimeoutMs() != 0 {
		t.Errorf("AtVersion toPB = %v", p)
	}
	if k := Absolute.toPB().GetKind().String(); k != "CONSISTENCY_KIND_ABSOLUTE" {
		t.Errorf("Absolute kind %s", k)
	}
}
