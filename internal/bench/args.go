package bench

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Phase is what a run does: load the records, or run the operation mix.
type Phase int

// The phases.
const (
	PhaseLoad Phase = iota // insert recordcount (or insertcount) records: YCSB -load
	PhaseRun               // perform operationcount operations: YCSB -t
)

func (p Phase) String() string {
	if p == PhaseLoad {
		return "load"
	}
	return "run"
}

// ParsePhase reads "load" or "run".
func ParsePhase(s string) (Phase, error) {
	switch s {
	case "load":
		return PhaseLoad, nil
	case "run":
		return PhaseRun, nil
	}
	return 0, usagef("unknown phase %q (want load or run)", s)
}

// UsageError is a command line or property the user must fix. The command
// exits with status 2 on it.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &UsageError{msg: "bench: " + fmt.Sprintf(format, args...)}
}

// IsUsage reports whether err is (or wraps) a UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// Args is a parsed command line: cairn bench load|run [options].
type Args struct {
	Phase Phase
	// Files are the -P files in order.
	Files []string
	// Props are the properties in force: the -P files in order (later ones
	// winning), then the command line (-p, -threads, -target, -db, -s, -l),
	// which wins over every file, as in YCSB.
	Props *Properties
	// Help is set by -h, -help or --help; nothing else is checked then.
	Help bool
	// Line is the command line as given, for the run's log.
	Line []string
}

// ParseArgs parses the options after "cairn bench load|run". Each option may
// be spelled -x or --x, and a valued option as "-x v" or "-x=v". -P files
// are read here.
func ParseArgs(phase Phase, args []string) (*Args, error) {
	a := &Args{Phase: phase, Props: NewProperties(), Line: args}
	cmdline := NewProperties()
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" || arg == "--" {
			return nil, usagef("unexpected argument %q: options start with '-' (see 'cairn bench --help')", arg)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
		val, hasVal := "", false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, val, hasVal = name[:j], name[j+1:], true
		}
		value := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", usagef("option -%s needs a value", name)
			}
			i++
			return args[i], nil
		}
		flag := func() error {
			if hasVal {
				return usagef("option -%s takes no value", name)
			}
			return nil
		}
		switch name {
		case "h", "help":
			a.Help = true
			return a, nil
		case "P":
			f, err := value()
			if err != nil {
				return nil, err
			}
			fp, err := LoadPropertiesFile(f)
			if err != nil {
				return nil, &UsageError{msg: err.Error()}
			}
			a.Files = append(a.Files, f)
			a.Props.Merge(fp)
		case "p":
			kv, err := value()
			if err != nil {
				return nil, err
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, usagef("-p %q: want name=value (e.g. -p operationcount=99999)", kv)
			}
			cmdline.Set(k, v, "-p")
		case "threads", "target", "db", "l", "security":
			v, err := value()
			if err != nil {
				return nil, err
			}
			prop := map[string]string{"threads": "threadcount", "target": "target", "db": "db", "l": "label", "security": "cairn.security"}[name]
			cmdline.Set(prop, v, "-"+name)
		case "s":
			if err := flag(); err != nil {
				return nil, err
			}
			cmdline.Set("status", "true", "-s")
		case "load", "t":
			return nil, usagef("option -%s: the phase is the subcommand here (cairn bench load|run)", name)
		default:
			return nil, usagef("unknown option %s (options: -P file, -p name=value, -threads n, -target ops, -s, -db name, -l label, -security loginfile; see 'cairn bench --help')", arg)
		}
	}
	a.Props.Merge(cmdline)
	return a, nil
}

// WorkloadName names the workload for the result document: the -P files'
// base names joined with "+", else "core".
func (a *Args) WorkloadName() string {
	if len(a.Files) == 0 {
		return "core"
	}
	names := make([]string, len(a.Files))
	for i, f := range a.Files {
		names[i] = filepath.Base(f)
	}
	return strings.Join(names, "+")
}
