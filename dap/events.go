package dap

import (
	"fmt"

	godap "github.com/google/go-dap"

	"ndb/debugger"
)

// What the client is told when the program stops or ends: stopped,
// exited, terminated and output events.

// report sends the events for a stop. At the end of the program it sends
// the program's output and "program ended: ..." on the console, then
// stays stopped at the end (reason "exit") so that reverse commands still
// work; with noDebug or terminateAtEnd it sends exited and terminated
// instead.
func (c *conn) report(st debugger.Stop, reason string) {
	if st.Interrupted != "" && !st.IsExit() {
		// pdb: "Program interrupted. (Use 'cont' to resume)."
		why := "Program interrupted"
		if st.Interrupted == "timeout" {
			why = "Program interrupted by the time limit (it ran that long without reaching a stop)"
		}
		c.output("console", why+". (Use continue to resume.)\n")
		c.stopped(st, "pause", "")
		return
	}
	if st.IsExit() && st.Exit != debugger.ExitInvEntry {
		if out, ok := c.sess.Output(); ok && out != "" && !c.streamed {
			c.output("stdout", out)
		}
		if pm, ok := c.sess.PostMortem(); ok && pm.Traceback != "" {
			c.output("stderr", pm.Traceback)
		}
		msg := "program ended: " + st.Exit
		if st.Arg != "" {
			msg += ": " + st.Arg
		}
		c.output("console", msg+"\n")
		if !c.exited {
			// The program's end, once per run: it stays the end however
			// often the client steps back to it.
			c.exited = true
			code := 0
			if st.Exit != "normal" {
				code = 1 // Python's status for an uncaught exception
			}
			c.send(&godap.ExitedEvent{Event: c.event("exited"), Body: godap.ExitedEventBody{ExitCode: code}})
		}
		if c.args.NoDebug || c.args.TerminateAtEnd || len(c.sess.History()) == 1 {
			// (A run that ended before its first state has nothing to
			// step back into.)
			c.terminate()
			return
		}
		if st.Exit == "error" && c.uncaught {
			// Post-mortem: the stack is the traceback's frames (when the
			// run has them), where evaluate works on a live run;
			// stepBack shows where it was raised.
			c.stopped(st, "exception", st.Arg)
			return
		}
		c.stopped(st, "exit", "")
		return
	}
	if st.IsExit() {
		reason = "entry"
	} else if reason == "breakpoint" && st.Event != "line" {
		reason = "step" // a continue stops at a line only at a breakpoint (a function's: its first line)
	}
	if st.Event == "exception" {
		reason = "exception"
	}
	c.stopped(st, reason, "")
}

func (c *conn) stopped(st debugger.Stop, reason, text string) {
	c.vars = map[int]varsRef{}
	desc := describe(st, reason)
	if p := predictedText(st); p != "" {
		desc += ", " + p
	}
	c.send(&godap.StoppedEvent{Event: c.event("stopped"), Body: godap.StoppedEventBody{
		Reason: reason, Description: desc, ThreadId: threadID, AllThreadsStopped: true, Text: text}})
}

// describe is a stop as a person reads it in the client's call stack
// pane: "Paused on breakpoint", "Returned from f", "Program ended".
func describe(st debugger.Stop, reason string) string {
	switch {
	case reason == "pause" && st.Interrupted == "timeout":
		return "Paused: the time limit interrupted the program"
	case reason == "pause":
		return "Paused"
	case st.IsExit() && st.Exit == debugger.ExitInvEntry:
		return "Before the start of the program"
	case st.IsExit() && st.Exit == "normal":
		return "Program ended"
	case st.IsExit() && st.Exit == "error" && reason == "exception":
		return "Paused on uncaught exception"
	case st.IsExit() && st.Exit == "error":
		return "Program ended with an uncaught exception"
	case st.IsExit():
		return "Program ended (" + st.Exit + ")"
	case st.Event == "exception":
		return "Paused on exception in " + st.Function
	case reason == "breakpoint":
		return "Paused on breakpoint"
	case reason == "entry":
		return "Paused on entry"
	case st.Event == "return":
		return "Returned from " + st.Function
	case st.Event == "call":
		return "Called " + st.Function
	}
	return "Paused on step"
}

func (c *conn) output(category, text string) {
	c.send(&godap.OutputEvent{Event: c.event("output"), Body: godap.OutputEventBody{Category: category, Output: text}})
}

// predictedText is how a predicted stop is described: "predicted
// (confidence 0.87, min 0.41)" with the mean and the least probability of
// the tokens the model wrote for it, "predicted" without figures (a
// model's start, read from the source); "" for the real engine's stops.
func predictedText(st debugger.Stop) string {
	switch {
	case !st.Predicted:
		return ""
	case st.Confidence == nil:
		return "predicted"
	}
	mean, min := st.Confidence.Figures()
	return fmt.Sprintf("predicted (confidence %s, min %s)", mean, min)
}
