package shell

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cairndb/cairn/internal/admin"
)

// usageError is a command line that cannot be sent: exit code ExitUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// localCommands are run by the shell itself. help also takes command words.
var localCommands = []admin.Command{
	{Name: "help", Summary: "list the commands; help COMMAND describes one (help plan lists the plan commands)"},
	{Name: "load", Summary: "run the commands in a script file",
		Args: []admin.Arg{{Name: "file", Required: true, Help: "the script: one command per line, # starts a comment line"}},
		Help: "The script stops at its first failing command. A relative path is taken from the\n" +
			"directory of the script that loads it (from the working directory at the prompt)."},
	{Name: "history", Summary: "list the commands typed in this session"},
	{Name: "exit", Summary: "leave the shell"},
	{Name: "quit", Summary: "leave the shell"},
}

func localCommand(name string) (admin.Command, bool) {
	for _, c := range localCommands {
		if c.Name == name {
			return c, true
		}
	}
	return admin.Command{}, false
}

// Tokenize splits a command line into words. White space separates words;
// '...' quotes literally; "..." quotes, with \" and \\ standing for " and \.
// Quoted and unquoted parts next to each other make one word, and "" is an
// empty word. An unquoted # at the start of a word starts a comment that
// runs to the end of the line.
func Tokenize(line string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ', '\t', '\r', '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, usagef("unterminated ' quote in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case '"':
			inWord = true
			for i++; ; i++ {
				if i >= len(line) {
					return nil, usagef("unterminated \" quote in %q", line)
				}
				if line[i] == '"' {
					break
				}
				if line[i] == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\') {
					i++
				}
				cur.WriteByte(line[i])
			}
		case '#':
			if !inWord {
				i = len(line) // a comment runs to the end of the line
				continue
			}
			cur.WriteByte(c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// Parse reads a command line split into words against the command table:
// the leading words name the command, the rest are its options. It returns
// the command and its options as the admin expects them (names without
// dashes; "true" for a Flag). Errors are usage errors that say what is
// wrong; nothing is sent for them.
func Parse(words []string) (admin.Command, map[string]string, error) {
	names := commandWords(words)
	if len(names) == 0 {
		if len(words) == 0 {
			return admin.Command{}, nil, usagef("missing command; type help")
		}
		return admin.Command{}, nil, usagef("missing command before %q; type help", words[0])
	}
	c, n, ok := admin.Lookup(names)
	if !ok {
		return admin.Command{}, nil, unknownCommand(names)
	}
	if n < len(names) {
		return c, nil, usagef("%s: unexpected argument %q; options start with - (usage: %s)", c.Name, names[n], c.Usage())
	}
	args, err := parseOptions(c, words[n:])
	if err != nil {
		return c, nil, err
	}
	return c, args, nil
}

// commandWords returns the words before the first option.
func commandWords(words []string) []string {
	i := 0
	for i < len(words) && !strings.HasPrefix(words[i], "-") {
		i++
	}
	return words[:i]
}

// parseOptions parses c's options and checks them with c.Check.
func parseOptions(c admin.Command, toks []string) (map[string]string, error) {
	args := map[string]string{}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !strings.HasPrefix(t, "-") || t == "-" || t == "--" {
			return nil, usagef("%s: unexpected argument %q; options start with - (usage: %s)", c.Name, t, c.Usage())
		}
		name, val, hasVal := splitOption(t)
		a, ok := c.Arg(name)
		if !ok {
			// Check words the message the way the admin does.
			return nil, &usageError{msg: c.Check(map[string]string{name: ""}).Error()}
		}
		if _, dup := args[name]; dup {
			return nil, usagef("%s: -%s is given twice", c.Name, name)
		}
		switch {
		case hasVal:
		case a.Kind == admin.Flag:
			val = "true"
		case i+1 >= len(toks) || isOption(c, toks[i+1]):
			return nil, usagef("%s: -%s needs a value (%s)", c.Name, name, a.Help)
		default:
			i++
			val = toks[i]
		}
		args[name] = val
	}
	if err := c.Check(args); err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	if args["wait"] == "true" && args["noexecute"] == "true" {
		return nil, usagef("%s: give -wait or -noexecute, not both (a plan made with -noexecute waits for plan execute)", c.Name)
	}
	return args, nil
}

// splitOption splits "-name", "--name" or "--name=value".
func splitOption(t string) (name, val string, hasVal bool) {
	name = strings.TrimPrefix(t[1:], "-")
	if j := strings.IndexByte(name, '='); j >= 0 {
		return name[:j], name[j+1:], true
	}
	return name, "", false
}

// isOption reports whether t is one of c's options, so it cannot be the
// value of the option before it.
func isOption(c admin.Command, t string) bool {
	if !strings.HasPrefix(t, "-") || len(t) < 2 {
		return false
	}
	name, _, _ := splitOption(t)
	_, ok := c.Arg(name)
	return ok
}

// allNames returns every command name the shell knows, admin and local.
func allNames() []string {
	var names []string
	for _, c := range admin.Commands {
		names = append(names, c.Name)
	}
	for _, c := range localCommands {
		names = append(names, c.Name)
	}
	return names
}

// subcommands returns the admin commands whose names start with the words
// names, when names is not a command itself ("plan" -> the plan commands).
func subcommands(names []string) []admin.Command {
	var subs []admin.Command
	for _, c := range admin.Commands {
		f := strings.Fields(c.Name)
		if len(f) > len(names) && slices.Equal(f[:len(names)], names) {
			subs = append(subs, c)
		}
	}
	return subs
}

// unknownCommand explains that names select no command: it lists the
// subcommands of a partial name, and otherwise suggests the closest names.
func unknownCommand(names []string) error {
	typed := strings.Join(names, " ")
	if subs := subcommands(names); len(subs) > 0 {
		return usagef("%q is not a complete command; it is one of:\n%s", typed, strings.TrimRight(listCommands(subs), "\n"))
	}
	msg := fmt.Sprintf("unknown command %q; type help", typed)
	if s := suggest(names); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, ", ") + "?)"
	}
	return &usageError{msg: msg}
}

// maxSuggestions bounds the names suggested for an unknown command.
const maxSuggestions = 6

// suggest returns the command names closest to the unknown names: those it
// is a prefix of, those containing it as a word, and those within a small
// edit distance; for a single word also the command groups it nearly spells.
func suggest(names []string) []string {
	typed := strings.Join(names, " ")
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	seen := map[string]bool{}
	add := func(name string, dist int) {
		if !seen[name] {
			seen[name] = true
			cands = append(cands, cand{name, dist})
		}
	}
	for _, name := range allNames() {
		d := distance(typed, name)
		switch {
		case strings.HasPrefix(name, typed):
			add(name, d)
		case slices.Contains(strings.Fields(name), typed) || strings.HasSuffix(name, " "+typed):
			add(name, d)
		case d <= max(2, len(name)/5):
			add(name, d)
		}
	}
	if len(cands) == 0 && len(names) == 1 {
		for _, name := range allNames() {
			group := strings.Fields(name)[0]
			if group != name && distance(typed, group) <= 2 {
				add(group, distance(typed, group))
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].dist < cands[j].dist })
	var out []string
	for i, c := range cands {
		if i == maxSuggestions {
			out = append(out, "...")
			break
		}
		out = append(out, c.name)
	}
	return out
}

// distance is the Levenshtein edit distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// complete extends the start of a line being typed (Tab at the prompt): a
// command name while no option is given, an option name of the command
// after. It returns prefix unchanged when nothing or several things that
// share no longer prefix match.
func complete(prefix string) string {
	body := strings.TrimLeft(prefix, " ")
	if rest, ok := strings.CutPrefix(body, "help "); ok {
		body = strings.TrimLeft(rest, " ") // help takes command names
	}
	words := strings.Fields(body)
	partial := ""
	if len(words) > 0 && !strings.HasSuffix(body, " ") {
		partial = words[len(words)-1]
		words = words[:len(words)-1]
	}
	var cands []string
	if strings.HasPrefix(partial, "-") {
		c, ok := commandFor(words)
		if !ok {
			return prefix
		}
		dashes := "-"
		if strings.HasPrefix(partial, "--") {
			dashes = "--"
		}
		for _, a := range c.AllArgs() {
			if opt := dashes + a.Name; strings.HasPrefix(opt, partial) {
				cands = append(cands, opt)
			}
		}
		return finish(prefix, partial, cands)
	}
	if len(commandWords(words)) < len(words) {
		return prefix // a value
	}
	typed := strings.Join(append(slices.Clone(words), partial), " ")
	for _, name := range allNames() {
		if strings.HasPrefix(name, typed) {
			cands = append(cands, name)
		}
	}
	return finish(prefix, typed, cands)
}

// commandFor returns the command that words name exactly.
func commandFor(words []string) (admin.Command, bool) {
	if len(words) == 1 {
		if c, ok := localCommand(words[0]); ok {
			return c, true
		}
	}
	c, n, ok := admin.Lookup(words)
	return c, ok && n == len(words)
}

// finish appends to prefix what the candidates share beyond typed, and a
// space when exactly one candidate is complete.
func finish(prefix, typed string, cands []string) string {
	if len(cands) == 0 {
		return prefix
	}
	common := cands[0]
	for _, c := range cands[1:] {
		for !strings.HasPrefix(c, common) {
			common = common[:len(common)-1]
		}
	}
	if len(cands) == 1 {
		common += " "
	}
	if len(common) <= len(typed) {
		return prefix
	}
	return prefix + common[len(typed):]
}
