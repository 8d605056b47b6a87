package repl

import (
	"context"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/tracer"
)

// pdb's breakpoint commands (numbers, hits, condition, ignore, enable,
// disable, clear by number and by FILE:LINE), conditions as Python
// expressions in the live frame, and breakpoints on Class.method and
// module.function, each checked against `python3 -m pdb` by
// TestPdbCommands (testdata/conds.py, testdata/pdbcmds.py).
func init() {
	pdbCmdCases = append(pdbCmdCases,
		pdbCase{name: "bp_numbers", commands: []string{"b 9", "b 9", "tbreak 2", "b", "ignore 1 2", "b", "c", "p x", "b",
			"condition 2 x == 3", "c", "p x", "b", "cl 3", "cl 1", "cl 1", "cl 9 2 x", "b 3", "disable 4", "enable 4 7", "b",
			"ignore 4", "ignore 4 1", "condition 4", "c", "cl pdbcmds.py:3", "cl pdbcmds.py:3", "b", "c"}},
		pdbCase{name: "bp_disable", commands: []string{"b 9", "b 2", "disable 1", "c", "p n", "enable 1", "disable 2", "c", "p x", "b", "cl 1 2", "b", "c"}},
		pdbCase{name: "cond_python", live: true, file: "conds.py", commands: []string{`b 4, w.startswith("m") and len(seen) > 2`, "b 6", "b",
			"c", "p w, seen", "c", "p w", "disable 2", "c", "p w", "b", "c", "p w", "cl 1", "c"}},
		pdbCase{name: "cond_python_error", live: true, file: "conds.py", commands: []string{"b 4, nosuch > 1", "tbreak 6, w[10] == 'x'",
			"c", "p w", "c", "p w", "b", "condition 1 len(w) == 4 # short", "c", "p w", "c", "p w", "condition 1", "ignore 1 3", "c", "p w", "b"}},
		pdbCase{name: "break_method", live: true, file: "conds.py", commands: []string{"b Node.find", "b Node.nope", "b 22", "c",
			"b Node.find", "tbreak Node.__init__", "b conds.walk", "b", "c", "p self.v", "c", "p x", "c", "p x", "c", "p words"}},
		pdbCase{name: "break_module_func", live: true, file: "conds.py", commands: []string{"b conds.walk", "b conds.nope", "c", "p words", "b", "c", "c"}},
	)
}

func init() {
	pdbCmdCases = append(pdbCmdCases,
		pdbCase{name: "whatis_source", live: true, file: "conds.py", commands: []string{"b 23", "c", "whatis n", "whatis n.find", "whatis walk", "whatis Node",
			"whatis 3", "whatis nope", "whatis words[0]", "source walk", "source Node", "source n.find", "source 3", "source nope"}},
		pdbCase{name: "alias", live: true, file: "conds.py", commands: []string{"alias", "alias pw p %1 * 2", "alias pa p %*", "alias", "alias pw",
			"alias nope", "b 23", "c", "pw n.v", "pa n.v, words[0]", "alias bb b %1", "bb 24", "unalias pw", "alias", "pw 3", "c", "p x"}},
	)
}

func init() {
	// p f() shows what f prints, then the value; a condition that prints
	pdbCmdCases = append(pdbCmdCases,
		pdbCase{name: "p_prints", live: true, file: "conds.py", commands: []string{"b 23", "c", "p walk(['abcdef', 'x'])", "p print('hi') or 5",
			"b 15, print('cond', x) or x == 4", "c", "p x"}},
	)
}

func init() {
	// sys.exit(N): pdb's note, no post-mortem
	pdbCmdCases = append(pdbCmdCases, pdbCase{name: "sys_exit", file: "sysexit.py", commands: []string{"b 6", "c", "p n", "c"}})
}

// TestPdbRefusals: the pdb commands ndb does not run say why
// (docs/debugger.md lists them), on a live session and a recorded one.
func TestPdbRefusals(t *testing.T) {
	for _, live := range []bool{false, true} {
		var s *debugger.Session
		if live {
			s = newLiveScriptSession(t, pdbFixture, tracer.Limits{})
		} else {
			s = newScriptSession(t, pdbFixture)
		}
		term := New(s, Options{Name: pdbFixture})
		for _, c := range []struct{ cmd, want string }{
			{"commands 1", "commands: ndb does not run command lists"},
			{"interact", "interact: the program runs in a sandboxed worker"},
			{"debug f(1)", "debug: ndb has no recursive debugger"},
		} {
			_, err := term.Exec(context.Background(), c.cmd)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("live=%v %s: %v, want an error starting %q", live, c.cmd, err, c.want)
			}
		}
		if !live {
			if _, err := term.Exec(context.Background(), "restart 1 2"); err == nil || !strings.HasPrefix(err.Error(), "restart takes no arguments here") {
				t.Errorf("restart with arguments on a recorded trace: %v", err)
			}
			// whatis and source need the live frame: the reason, not a guess
			_, err := term.Exec(context.Background(), "whatis values")
			if err == nil || !strings.Contains(err.Error(), "no live program runs here") {
				t.Errorf("whatis on a recorded trace: %v", err)
			}
		}
		s.Close()
	}
}

func init() {
	// run ARGS / restart ARGS: the program's sys.argv, kept by a later restart
	pdbCmdCases = append(pdbCmdCases, pdbCase{name: "run_args", live: true, file: "argv.py",
		commands: []string{"n", "n", "p args", `run a 'b c' "d\" e"`, "n", "n", "p args", "restart", "n", "n", "p args"}})
}
