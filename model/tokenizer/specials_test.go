package tokenizer_test

import (
	"slices"
	"testing"

	"ndb/format"
	"ndb/model/tokenizer"
)

func TestSpecialsMatchFormat(t *testing.T) {
	if !slices.Equal(tokenizer.SpecialTokens, format.SpecialTokens) {
		t.Fatalf("tokenizer.SpecialTokens %q differs from format.SpecialTokens %q", tokenizer.SpecialTokens, format.SpecialTokens)
	}
}
