package admin

import (
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		words string
		want  string
		n     int
	}{
		{"plan deploy-zone -name x", "plan deploy-zone", 2},
		{"show plan -id 3", "show plan", 2},
		{"show plans", "show plans", 2},
		{"verify configuration", "verify configuration", 2},
		{"ping", "ping", 1},
	} {
		c, n, ok := Lookup(strings.Fields(tc.words))
		if !ok || c.Name != tc.want || n != tc.n {
			t.Errorf("Lookup(%q) = %q, %d, %v; want %q, %d", tc.words, c.Name, n, ok, tc.want, tc.n)
		}
	}
	for _, w := range []string{"plan", "shw plans", "deploy-zone"} {
		if c, _, ok := Lookup(strings.Fields(w)); ok {
			t.Errorf("Lookup(%q) found %q; want no command", w, c.Name)
		}
	}
}

func TestCheck(t *testing.T) {
	cmd := func(name string) Command {
		c, _, ok := Lookup(strings.Fields(name))
		if !ok {
			t.Fatalf("no command %q", name)
		}
		return c
	}
	for _, tc := range []struct {
		cmd  string
		args map[string]string
		err  string // "" = valid
	}{
		{"plan deploy-zone", map[string]string{"name": "z", "rf": "3"}, ""},
		{"plan deploy-zone", map[string]string{"name": "z", "rf": "3", "wait": "true", "type": "secondary"}, ""},
		{"plan deploy-zone", map[string]string{"name": "z"}, "-rf is required"},
		{"plan deploy-zone", map[string]string{"name": "z", "rf": "three"}, "-rf wants a non-negative integer"},
		{"plan deploy-zone", map[string]string{"name": "z", "rf": "3", "type": "tertiary"}, "-type must be one of primary, secondary"},
		{"plan deploy-zone", map[string]string{"name": "z", "rf": "3", "color": "red"}, "unknown option -color"},
		{"plan deploy-zone", map[string]string{"name": "z", "rf": "3", "wait": "yes"}, "-wait takes no value"},
		{"plan deploy-sn", map[string]string{"zn": "zn1", "host": "h", "port": "5000"}, ""},
		{"plan deploy-sn", map[string]string{"znname": "Z", "host": "h", "port": "5000"}, ""},
		{"plan deploy-sn", map[string]string{"host": "h", "port": "5000"}, "give -zn or -znname"},
		{"plan deploy-sn", map[string]string{"zn": "1", "znname": "Z", "host": "h", "port": "5000"}, "not both"},
		{"plan deploy-sn", map[string]string{"zn": "1", "host": "h", "port": "99999"}, `plan deploy-sn: -port wants an integer from 1 to 65535, not "99999"`},
		{"plan deploy-sn", map[string]string{"zn": "1", "host": "h", "port": "0"}, `-port wants an integer from 1 to 65535, not "0"`},
		{"plan deploy-sn", map[string]string{"zn": "1", "host": "h", "port": "-3"}, `-port wants an integer from 1 to 65535, not "-3"`},
		{"plan deploy-sn", map[string]string{"zn": "1", "host": "h", "port": "65535"}, ""},
		{"plan deploy-topology", map[string]string{"name": "T", "move-share": "500"}, `-move-share wants an integer from 1 to 100, not "500"`},
		{"plan deploy-topology", map[string]string{"name": "T", "move-share": "100"}, ""},
		{"topology create", map[string]string{"name": "T", "pool": "P", "partitions": "99999999999"}, `topology create: -partitions wants an integer from 1 to 65536, not "99999999999"`},
		{"topology create", map[string]string{"name": "T", "pool": "P", "partitions": "65536"}, ""},
		{"show events", map[string]string{"last": "99999999999"}, "-last 99999999999 is too large: give at most 2147483647"},
		{"show events", map[string]string{"last": "99999999999999999999999"}, "-last 99999999999999999999999 is too large: give at most 2147483647"},
		{"show events", map[string]string{"last": "-1"}, `-last wants a non-negative integer, not "-1"`},
		{"show plans", map[string]string{"id": "1"}, "unknown option -id"},
		{"topology validate", map[string]string{}, ""},
		{"configure", map[string]string{"name": " "}, "-name wants a value"},
	} {
		err := cmd(tc.cmd).Check(tc.args)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s %v: %v", tc.cmd, tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s %v: error %v, want one containing %q", tc.cmd, tc.args, err, tc.err)
		}
	}
}

func TestUsage(t *testing.T) {
	c, _, _ := Lookup([]string{"plan", "deploy-sn"})
	want := "plan deploy-sn -zn ZN|-znname ZNNAME -host HOST -port N [-wait] [-noexecute]"
	if got := c.Usage(); got != want {
		t.Errorf("Usage = %q, want %q", got, want)
	}
	for _, c := range Commands {
		if handlers[c.Name] == nil {
			t.Errorf("command %q has no handler", c.Name)
		}
		if c.Summary == "" {
			t.Errorf("command %q has no summary", c.Name)
		}
	}
}

func TestParseIDs(t *testing.T) {
	for _, tc := range []struct {
		in     string
		prefix string
		want   uint64
		ok     bool
	}{
		{"sn3", "sn", 3, true}, {"3", "sn", 3, true}, {"SN12", "sn", 12, true},
		{"sn0", "sn", 0, false}, {"zn1", "sn", 0, false}, {"", "sn", 0, false}, {"sn-1", "sn", 0, false},
	} {
		got, err := parseID(tc.in, tc.prefix)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseID(%q, %q) = %d, %v", tc.in, tc.prefix, got, err)
		}
	}
	if s, n, err := parseService("rg2-rn3"); err != nil || s != 2 || n != 3 {
		t.Errorf("parseService(rg2-rn3) = %d, %d, %v", s, n, err)
	}
	for _, bad := range []string{"rg2", "rn3-rg2", "rg-rn", "admin1"} {
		if _, _, err := parseService(bad); err == nil {
			t.Errorf("parseService(%q) accepted", bad)
		}
	}
}

func TestPlanStates(t *testing.T) {
	for _, s := range []PlanState{Succeeded, Failed, Interrupted, Canceled} {
		if !s.Terminal() {
			t.Errorf("%s is not terminal", s)
		}
	}
	for _, s := range []PlanState{Pending, Running} {
		if s.Terminal() {
			t.Errorf("%s is terminal", s)
		}
	}
	p := &Plan{ID: 4, Name: "deploy-zone", Args: map[string]string{"name": "Z", "rf": "3", "wait": "true"}, State: Running,
		Tasks: []*Task{{Desc: "a", State: "SUCCEEDED"}, {Desc: "b", State: "RUNNING", Attempts: 3, Error: "unreachable"}}}
	if got, want := p.summary(0), "Plan 4 [deploy-zone -name Z -rf 3] RUNNING: 1/2 tasks done"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	if d := p.detail(0); !strings.Contains(d, "(3 attempts)") || !strings.Contains(d, "last error: unreachable") {
		t.Errorf("detail lacks attempts or error:\n%s", d)
	}
}

func TestMetaEventsAreBounded(t *testing.T) {
	var m Meta
	for i := range maxEvents + 10 {
		m.event("e%d", i)
	}
	if len(m.Events) != maxEvents || m.Events[0].Text != "e10" || m.Events[len(m.Events)-1].Seq != maxEvents+10 {
		t.Errorf("events: %d kept, first %q, last seq %d", len(m.Events), m.Events[0].Text, m.Events[len(m.Events)-1].Seq)
	}
}
