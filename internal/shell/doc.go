// Package shell is the admin shell behind `cairn admin`, Cairn's runadmin:
// it reads admin command lines, checks them against the command table
// (admin.Commands), sends them to a storage node through a Caller and
// prints the replies.
//
// # Modes
//
//	RunCommand     one command given as words (cairn admin show topology)
//	RunFile        a script file (cairn admin -script setup.kvs)
//	RunScript      a script from a reader (cairn admin < setup.kvs)
//	RunTerminal    the interactive kv-> prompt, with line editing and history
//	RunInteractive the same loop over any LineReader (tests)
//
// A script holds one command per line; blank lines and lines starting with
// # are skipped. Each command is echoed as "kv-> COMMAND" before its output
// (not with -json, whose stdout is one JSON document per command), so the
// log of a script run reads like a session. A script stops at its first
// failing command and reports it as "FILE:LINE: message". `load -file F`
// runs a script from any mode; a relative F is taken from the directory of
// the script that loads it (from the working directory at the prompt),
// loads nest at most MaxLoadDepth deep, and loading a script that is
// running already (a loop) is refused. A line holds at most 1 MiB. Each of
// these failures, like a failing command, is reported once at its place,
// after the places of the loads that led there ("a.kvs:2: b.kvs:5: ...").
// exit or quit in a loaded script ends that script; at the top, or in a
// script given to RunFile or RunScript, it ends the shell with 0. The
// interactive loop reports a failure and reads the next command; Tab
// completes command and option names. help and history print text even
// with JSON set.
//
// # Command lines
//
// Words are split on white space; '...' quotes literally and "..." quotes
// with \" and \\ escapes. Options take one or two dashes and their value as
// the next word or after '=': -name X, --name X, --name=X. A Flag option
// (-wait) takes no value and is sent as "true". Lines are checked with
// admin.Command.Check before anything is sent, so usage errors need no
// server. Local commands: help [WORDS], load -file F, history, exit, quit.
//
// # Plans
//
// A plan command given -wait (and plan execute -wait) is sent as is; the
// shell prints the reply, takes the plan id from its JSON ("plan_id", or
// "id") and calls "plan wait -id N -seconds 30" until the plan's "state" is
// SUCCEEDED, ERROR, INTERRUPTED or CANCELED, or WaitTimeout passes. With
// -json only the final plan document is printed. A reply with no plan id
// and "nothing_to_do": true created no plan (nothing needed changing):
// -wait prints it and succeeds.
//
// -wait follows the plan through one node at a time (follow.go). Given a
// NodeCaller (*admin.Client), it starts with the first of the Caller's
// addresses that answers show admins, whose reply names the store's
// admins; given a plain Caller, the Caller is that node. When that node stops
// answering plan wait (it cannot be reached, does not answer within the
// seconds asked plus 20 s, or answers Unavailable: it lost the admin
// leadership), the shell writes one "Warning: lost the admin at H:P (...);
// following plan N through another admin" line on Err, then asks the
// Caller's addresses and the admins in turn (each to wait one second for
// the plan) and follows the first that answers. It only ever sends plan
// wait -id N: the plan is never sent again. When none has answered for FailoverTimeout, the
// command ends with ExitUnreachable and a message naming the plan and how
// to follow it later (plan wait -id N, show plan -id N). Invariants: the
// loss is said once each time the node followed stops answering, and
// nothing else is added to the output while it answers.
//
// # Output and exit codes
//
// Replies go to Out; "Error: message" goes to Err, or {"error": "message"}
// to Out with JSON set. The Run functions return the process exit code,
// from the table of package exitcode that every cairn command shares:
//
//	0 ExitOK           success
//	1 ExitFailed       a command failed, reported problems, or its plan did not succeed
//	2 ExitUsage        unknown or incomplete command (plan, show), unknown
//	                   option, missing or bad value, a script that cannot
//	                   be read (-script, load -file: missing, a directory,
//	                   a line over 1 MiB, a load loop), or a request
//	                   the admin rejected as invalid (gRPC InvalidArgument)
//	3 ExitUnreachable  no storage node answered (admin.ErrUnreachable), the
//	                   admin cannot serve for now (gRPC Unavailable: no
//	                   leader yet), or the command timed out
//
// # Concurrency
//
// A Shell is used by one goroutine: it runs one command at a time and keeps
// per-session state (history, load nesting). The Caller is only called from
// that goroutine. RunTerminal puts the terminal in raw mode only while it
// reads a line, so Ctrl-C during a command sends SIGINT, which cancels that
// command (not the shell); Ctrl-C or Ctrl-D at the prompt leaves.
//
// # Example
//
//	c, _ := admin.Dial([]string{"127.0.0.1:5000"})
//	sh := &shell.Shell{Caller: c, In: os.Stdin, Out: os.Stdout, Err: os.Stderr}
//	os.Exit(sh.RunCommand(ctx, []string{"show", "topology"}))
package shell
