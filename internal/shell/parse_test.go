package shell

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
		err  string
	}{
		{line: "", want: nil},
		{line: "  show   topology \t", want: []string{"show", "topology"}},
		{line: `configure -name "my store"`, want: []string{"configure", "-name", "my store"}},
		{line: `configure -name 'it''s'`, want: []string{"configure", "-name", "its"}},
		{line: `a 'x "y" z'`, want: []string{"a", `x "y" z`}},
		{line: `a "x 'y' z"`, want: []string{"a", "x 'y' z"}},
		{line: `a "q\"uote\\d"`, want: []string{"a", `q"uote\d`}},
		{line: `a "back\slash"`, want: []string{"a", `back\slash`}},
		{line: `a pre"mid dle"post`, want: []string{"a", "premid dlepost"}},
		{line: `a "" b`, want: []string{"a", "", "b"}},
		{line: `a --name=x`, want: []string{"a", "--name=x"}},
		{line: `show zones # trailing comment`, want: []string{"show", "zones"}},
		{line: `# a whole-line comment`, want: nil},
		{line: `a b#c "d # e" '#f'`, want: []string{"a", "b#c", "d # e", "#f"}},
		{line: `a "open`, err: `unterminated " quote`},
		{line: `a 'open`, err: `unterminated ' quote`},
	} {
		got, err := Tokenize(tc.line)
		if tc.err != "" {
			var ue *usageError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ue) {
				t.Errorf("Tokenize(%q) = %q, %v; want usage error %q", tc.line, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Tokenize(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		line    string
		command string
		args    map[string]string
		err     string // a usage error containing this
	}{
		{line: "show topology", command: "show topology", args: map[string]string{}},
		{line: "plan deploy-zone -name dc1 -rf 3", command: "plan deploy-zone",
			args: map[string]string{"name": "dc1", "rf": "3"}},
		{line: "plan deploy-zone --name dc1 --rf 3 --wait", command: "plan deploy-zone",
			args: map[string]string{"name": "dc1", "rf": "3", "wait": "true"}},
		{line: "plan deploy-zone --name=dc1 -rf=3 -type secondary -noexecute", command: "plan deploy-zone",
			args: map[string]string{"name": "dc1", "rf": "3", "type": "secondary", "noexecute": "true"}},
		{line: `plan deploy-zone -name "Data Center 1" -rf 1`, command: "plan deploy-zone",
			args: map[string]string{"name": "Data Center 1", "rf": "1"}},
		{line: "plan deploy-sn -zn zn1 -host h1 -port 5000", command: "plan deploy-sn",
			args: map[string]string{"zn": "zn1", "host": "h1", "port": "5000"}},
		{line: "plan deploy-sn -znname dc1 -host h1 -port 5000", command: "plan deploy-sn",
			args: map[string]string{"znname": "dc1", "host": "h1", "port": "5000"}},
		{line: "plan deploy-admin -sn sn1", command: "plan deploy-admin", args: map[string]string{"sn": "sn1"}},
		{line: "plan execute -id 4 -wait", command: "plan execute", args: map[string]string{"id": "4", "wait": "true"}},
		{line: "show plan -id 7", command: "show plan", args: map[string]string{"id": "7"}},

		{line: "plan deploy-zone -name dc1", err: "-rf is required"},
		{line: "plan deploy-zone -name dc1 -rf", err: "-rf needs a value"},
		{line: "plan deploy-zone -name -rf 3", err: "-name needs a value"},
		{line: "plan deploy-zone -name dc1 -rf three", err: "-rf wants a non-negative integer"},
		{line: "plan deploy-zone -name dc1 -rf 3 -type tertiary", err: "-type must be one of primary, secondary"},
		{line: "plan deploy-zone -name dc1 -rf 3 -bogus 1", err: "unknown option -bogus"},
		{line: "plan deploy-zone -name dc1 -rf 3 --bogus=1", err: "unknown option -bogus"},
		{line: "plan deploy-zone -name dc1 -name dc2 -rf 3", err: "-name is given twice"},
		{line: "plan deploy-zone -name dc1 -rf 3 extra", err: `unexpected argument "extra"`},
		{line: "plan deploy-zone extra -name dc1 -rf 3", err: `unexpected argument "extra"`},
		{line: "plan deploy-zone -name dc1 -rf 3 -wait=yes", err: "-wait takes no value"},
		{line: "plan deploy-zone -name dc1 -rf 3 -wait -noexecute", err: "not both"},
		{line: "plan deploy-sn -zn 1 -znname dc1 -host h -port 1", err: "not both"},
		{line: "plan deploy-sn -host h -port 1", err: "give -zn or -znname"},
		{line: "-name x", err: `missing command before "-name"`},
		{line: "shwo topology", err: `unknown command "shwo topology"; type help (did you mean show topology?)`},
		{line: "deploy-zone -name x", err: "did you mean plan deploy-zone?"},
		{line: "plan deploy", err: "did you mean plan deploy-sn, plan deploy-zone, plan deploy-admin, plan deploy-topology?"},
		{line: "zzzzzz", err: `unknown command "zzzzzz"; type help`},
		{line: "plan", err: "\"plan\" is not a complete command; it is one of:\n  plan deploy-zone"},
		{line: "show", err: "show topology"},
	} {
		words, err := Tokenize(tc.line)
		if err != nil {
			t.Fatal(err)
		}
		c, args, err := Parse(words)
		if tc.err != "" {
			var ue *usageError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ue) {
				t.Errorf("Parse(%q) = %v; want a usage error containing %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil || c.Name != tc.command || !maps.Equal(args, tc.args) {
			t.Errorf("Parse(%q) = %q %v, %v; want %q %v", tc.line, c.Name, args, err, tc.command, tc.args)
		}
	}
}

func TestSuggestNoise(t *testing.T) {
	// Unrelated words suggest nothing; a typo of a group word suggests it.
	if s := suggest([]string{"frobnicate"}); len(s) != 0 {
		t.Errorf("suggest(frobnicate) = %q, want none", s)
	}
	if s := suggest([]string{"shwo"}); !slices.Contains(s, "show") {
		t.Errorf("suggest(shwo) = %q, want show", s)
	}
	if s := suggest([]string{"p"}); len(s) != maxSuggestions+1 || s[maxSuggestions] != "..." {
		t.Errorf("suggest(p) = %q, want %d names and ...", s, maxSuggestions)
	}
}

func TestComplete(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"conf", "configure "},
		{"plan dep", "plan deploy-"},
		{"plan deploy-z", "plan deploy-zone "},
		{"show plan", "show plan"}, // show plan and show plans
		{"sh", "show "},
		{"plan deploy-zone -n", "plan deploy-zone -n"}, // -name and -noexecute
		{"plan deploy-zone -na", "plan deploy-zone -name "},
		{"plan deploy-zone --r", "plan deploy-zone --rf "},
		{"plan deploy-zone -name x", "plan deploy-zone -name x"},
		{"lo", "load "},
		{"load -f", "load -file "},
		{"xyz", "xyz"},
		{"help plan wa", "help plan wait "},
		{"help  sh", "help  show "},
		{"  pi", "  ping "},
	} {
		if got := complete(tc.in); got != tc.want {
			t.Errorf("complete(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"show", "shwo", 2}, {"kitten", "sitting", 3}, {"plan", "plan", 0}} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
