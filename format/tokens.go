// Package format is the model's text (SPEC section 5): it turns trajectories
// of debugger states into the exact text a model reads and writes, and parses
// that text back. It also writes and reads CWM's own trace format.
//
// The text is a sequence of special tokens (each a single token for the
// model, written <|name|>) and free text (source code, SRC lines, JSON).
// Free text never contains a special token: the serializer refuses such
// input, so splitting on special tokens is always unambiguous.
package format

import "strings"

// Special tokens of the model's text. Every string here is one token.
const (
	TokBeginOfText       = "<|begin_of_text|>"
	TokEndOfText         = "<|end_of_text|>"
	TokTraceContextStart = "<|trace_context_start|>"
	TokTraceEnd          = "<|trace_end|>"
	TokFrameSep          = "<|frame_sep|>"
	TokCallSep           = "<|call_sep|>"
	TokLineSep           = "<|line_sep|>"
	TokReturnSep         = "<|return_sep|>"
	TokExceptionSep      = "<|exception_sep|>" // ours: exception frames
	TokSrcSep            = "<|src_sep|>"
	TokArgSep            = "<|arg_sep|>"
	TokActionSep         = "<|action_sep|>"
	TokInvCallSep        = "<|inv_call_sep|>"
	TokInvLineSep        = "<|inv_line_sep|>"
	TokInvReturnSep      = "<|inv_return_sep|>"
	TokInvLineCallSep    = "<|inv_line_call_sep|>" // ours
	TokInvExceptionSep   = "<|inv_exception_sep|>" // ours: exception frames seen backwards
	TokExitNormal        = "<|exit_normal|>"
	TokExitError         = "<|exit_error|>" // ours
	TokExitNever         = "<|exit_never|>" // ours
	TokInvExitEntry      = "<|inv_exit_entry|>"
	TokStepInto          = "<|step_into|>"
	TokStepOver          = "<|step_over|>"
	TokStepReturn        = "<|step_return|>"
	TokBreakpoint        = "<|breakpoint|>"
	TokContinue          = "<|continue|>"
	TokInvStepInto       = "<|inv_step_into|>"
	TokInvStepOver       = "<|inv_step_over|>"
	TokInvStepCall       = "<|inv_step_call|>"
)

// SpecialTokens lists every special token of the ndb and CWM formats, in a
// fixed order (the tokenizer may assign ids in this order).
var SpecialTokens = []string{
	TokBeginOfText, TokEndOfText, TokTraceContextStart, TokTraceEnd,
	TokFrameSep, TokCallSep, TokLineSep, TokReturnSep, TokExceptionSep,
	TokSrcSep, TokArgSep, TokActionSep,
	TokInvCallSep, TokInvLineSep, TokInvReturnSep, TokInvLineCallSep, TokInvExceptionSep,
	TokExitNormal, TokExitError, TokExitNever, TokInvExitEntry,
	TokStepInto, TokStepOver, TokStepReturn, TokBreakpoint, TokContinue,
	TokInvStepInto, TokInvStepOver, TokInvStepCall,
}

var specialSet = func() map[string]bool {
	m := make(map[string]bool, len(SpecialTokens))
	for _, t := range SpecialTokens {
		m[t] = true
	}
	return m
}()

// longest special token, bounds the look-ahead of the lexer.
var maxTokenLen = func() int {
	n := 0
	for _, t := range SpecialTokens {
		n = max(n, len(t))
	}
	return n
}()

// IsSpecialToken reports whether s is exactly one special token.
func IsSpecialToken(s string) bool { return specialSet[s] }

// ContainsSpecialToken reports whether s contains a special token anywhere.
// Such text cannot be serialized: it would be read back as structure.
func ContainsSpecialToken(s string) bool {
	_, _, ok := nextSpecial(s, 0)
	return ok
}

// nextSpecial finds the first special token at or after from: its start and
// end offsets.
func nextSpecial(s string, from int) (start, end int, ok bool) {
	for i := from; ; {
		j := strings.Index(s[i:], "<|")
		if j < 0 {
			return 0, 0, false
		}
		j += i
		if k := strings.Index(s[j+2:min(len(s), j+maxTokenLen)], "|>"); k >= 0 {
			e := j + 2 + k + 2
			if specialSet[s[j:e]] {
				return j, e, true
			}
		}
		i = j + 1
	}
}
