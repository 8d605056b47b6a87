package tokenizer

// SpecialTokens is SPEC section 5's list of special tokens, in the order they
// get their ids (after the byte and merge tokens). It is a copy of
// format.SpecialTokens, not an import of it, so that this package builds on
// its own; TestSpecialsMatchFormat keeps the two equal. Each tokenizer file
// stores its own list, so a later change leaves old files valid.
var SpecialTokens = []string{
	"<|begin_of_text|>",
	"<|end_of_text|>",
	"<|trace_context_start|>",
	"<|trace_end|>",
	"<|frame_sep|>",
	"<|call_sep|>",
	"<|line_sep|>",
	"<|return_sep|>",
	"<|exception_sep|>",
	"<|src_sep|>",
	"<|arg_sep|>",
	"<|action_sep|>",
	"<|inv_call_sep|>",
	"<|inv_line_sep|>",
	"<|inv_return_sep|>",
	"<|inv_line_call_sep|>",
	"<|inv_exception_sep|>",
	"<|exit_normal|>",
	"<|exit_error|>",
	"<|exit_never|>",
	"<|inv_exit_entry|>",
	"<|step_into|>",
	"<|step_over|>",
	"<|step_return|>",
	"<|breakpoint|>",
	"<|continue|>",
	"<|inv_step_into|>",
	"<|inv_step_over|>",
	"<|inv_step_call|>",
}

// BeginOfText and EndOfText are the document delimiters; the HF export uses
// them as bos and eos.
const (
	BeginOfText = "<|begin_of_text|>"
	EndOfText   = "<|end_of_text|>"
)
