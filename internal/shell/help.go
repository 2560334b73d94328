package shell

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/cairndb/cairn/internal/admin"
)

// HelpText returns the list of every command, admin and local: its usage
// and summary, grouped by first word in the table's order.
func HelpText() string {
	var b strings.Builder
	b.WriteString("Admin commands (options take one or two dashes: -name X, --name X, --name=X):\n")
	var group string
	for _, c := range admin.Commands {
		if g := strings.Fields(c.Name)[0]; g != group {
			group = g
			b.WriteByte('\n')
		}
		writeEntry(&b, c)
	}
	b.WriteString("\nShell commands:\n\n")
	for _, c := range localCommands {
		writeEntry(&b, c)
	}
	b.WriteString("\nType help COMMAND (for example: help plan deploy-zone) for a command's options.\n")
	return b.String()
}

func writeEntry(b *strings.Builder, c admin.Command) {
	usage := c.Usage()
	if c.Name == "help" {
		usage = "help [COMMAND]"
	}
	fmt.Fprintf(b, "  %s\n      %s\n", usage, c.Summary)
}

// listCommands lists cs, one usage and summary each.
func listCommands(cs []admin.Command) string {
	var b strings.Builder
	for _, c := range cs {
		writeEntry(&b, c)
	}
	return b.String()
}

// Describe returns the full help of one command: usage, summary, each
// option with its help, and the command's long help.
func Describe(c admin.Command) string {
	var b strings.Builder
	usage := c.Usage()
	if c.Name == "help" {
		usage = "help [COMMAND]"
	}
	fmt.Fprintf(&b, "Usage: %s\n\n%s\n", usage, c.Summary)
	if args := c.AllArgs(); len(args) > 0 {
		b.WriteString("\nOptions:\n")
		tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		for _, a := range args {
			opt := "-" + a.Name
			switch {
			case a.Kind == admin.Flag:
			case len(a.Choices) > 0:
				opt += " " + strings.Join(a.Choices, "|")
			case a.Kind == admin.Int:
				opt += " N"
			default:
				opt += " " + strings.ToUpper(a.Name)
			}
			help := a.Help
			switch {
			case a.Required && a.OneOf != "":
				help += fmt.Sprintf(" (required, or -%s)", a.OneOf)
			case a.Required:
				help += " (required)"
			}
			fmt.Fprintf(tw, "  %s\t%s\n", opt, help)
		}
		_ = tw.Flush()
	}
	if c.Help != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(c.Help, "\n"))
	}
	return b.String()
}

// help runs the local help command.
func (s *Shell) help(words []string) status {
	if len(words) == 0 {
		fmt.Fprint(s.Out, HelpText())
		return status{}
	}
	if c, ok := commandFor(words); ok {
		fmt.Fprint(s.Out, Describe(c))
		return status{}
	}
	if subs := subcommands(words); len(subs) > 0 {
		fmt.Fprint(s.Out, listCommands(subs))
		return status{}
	}
	return failure(unknownCommand(words))
}
