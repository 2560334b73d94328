package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Properties is a set of YCSB properties with where each value came from,
// so that errors can say "recordcount=abc (-p)" or "(workloads/workloada:17)".
type Properties struct {
	vals map[string]string
	srcs map[string]string
}

// NewProperties returns an empty set.
func NewProperties() *Properties {
	return &Properties{vals: map[string]string{}, srcs: map[string]string{}}
}

// Set sets name to value, recording its source; aliases are renamed to
// their canonical property.
func (p *Properties) Set(name, value, source string) {
	if c, ok := propAliases[name]; ok {
		name = c
	}
	p.vals[name] = value
	p.srcs[name] = source
}

// Get returns a property's value and whether it was set.
func (p *Properties) Get(name string) (string, bool) {
	v, ok := p.vals[name]
	return v, ok
}

// Source says where a property was set ("-p", a file and line, "default").
func (p *Properties) Source(name string) string {
	if s, ok := p.srcs[name]; ok {
		return s
	}
	return "default"
}

// Names returns the names of the set properties.
func (p *Properties) Names() []string {
	out := make([]string, 0, len(p.vals))
	for n := range p.vals {
		out = append(out, n)
	}
	return out
}

// Merge copies every property of o into p, o winning.
func (p *Properties) Merge(o *Properties) {
	for n, v := range o.vals {
		p.vals[n], p.srcs[n] = v, o.srcs[n]
	}
}

// LoadPropertiesFile reads a Java properties file (YCSB's -P): '#' and '!'
// comment lines, "key=value", "key: value" or "key value", backslash line
// continuations and the escapes \t \n \r \f \uXXXX. Unlike Java, trailing
// spaces of a value are dropped.
func LoadPropertiesFile(path string) (*Properties, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: -P %s: %w", path, err)
	}
	p, err := parseProperties(b, path)
	if err != nil {
		return nil, fmt.Errorf("bench: -P %w", err)
	}
	return p, nil
}

func parseProperties(b []byte, name string) (*Properties, error) {
	p := NewProperties()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	lineNo := 0
	var logical strings.Builder
	start := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		if logical.Len() == 0 {
			trimmed := strings.TrimLeft(line, " \t\f")
			if trimmed == "" || trimmed[0] == '#' || trimmed[0] == '!' {
				continue
			}
			start = lineNo
			line = trimmed
		} else {
			line = strings.TrimLeft(line, " \t\f")
		}
		if continues(line) {
			logical.WriteString(line[:len(line)-1])
			continue
		}
		logical.WriteString(line)
		key, val, err := splitProperty(logical.String())
		logical.Reset()
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, start, err)
		}
		p.Set(key, val, fmt.Sprintf("%s:%d", name, start))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if logical.Len() > 0 {
		key, val, err := splitProperty(logical.String())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, start, err)
		}
		p.Set(key, val, fmt.Sprintf("%s:%d", name, start))
	}
	return p, nil
}

// continues reports whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line into key and value at the first
// unescaped '=', ':' or whitespace.
func splitProperty(s string) (string, string, error) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	key, rest := s[:min(i, len(s))], s[min(i, len(s)):]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	k, err := unescape(key)
	if err != nil {
		return "", "", err
	}
	v, err := unescape(rest)
	if err != nil {
		return "", "", err
	}
	return k, strings.TrimRight(v, " \t\f"), nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 >= len(s) {
				return "", fmt.Errorf("malformed \\u escape in %q", s)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("malformed \\u escape in %q", s)
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}
