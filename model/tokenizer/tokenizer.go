// Package tokenizer is ndb's byte-level BPE tokenizer: trained on trajectory
// text, with every special token of SPEC section 5 as one atomic token, and
// exported to (and imported from) Hugging Face's tokenizer.json.
//
// Ids: 0..255 are the raw bytes (id = byte value), then one id per distinct
// merged token in merge order, then the special tokens. Text is split on the
// special tokens first, then into pieces by the tokenizer's Pretokenizer
// (ndb's PretokenizePattern unless trained with another); merges apply inside
// a piece, lowest rank first, as Hugging Face's BPE model does.
// Any byte string, valid UTF-8 or not, round-trips: Decode(Encode(s)) == s.
package tokenizer

import (
	"container/heap"
	"fmt"
	"strings"
	"sync"
)

// Tokenizer encodes text to token ids and back. It is safe for concurrent
// use; encoding caches the ids of each piece it has seen.
type Tokenizer struct {
	merges           [][2]int32         // rank -> the pair it merges
	ranks            map[uint64]mergeTo // pair -> its rank and resulting id
	tokens           []string           // id -> bytes (a special token's own text)
	specials         []string           // special tokens; ids specialBase+i
	special          map[string]int32   // special text -> id
	firstSpecialByte [256]bool          // bytes a special token can start with
	trie             []trieNode         // the specials' texts; node 0 is the root
	specialBase      int32
	pre              Pretokenizer
	split            func(s string, emit func(piece string)) // pre's scanner
	// whole maps the text of each byte or merged token to its id when pre
	// ignores merges for a piece that is one token (see pretokenizers); nil
	// otherwise.
	whole map[string]int32

	mu    sync.RWMutex
	cache map[string][]int32 // piece -> ids
}

type mergeTo struct {
	rank int32
	id   int32
}

// maxCacheEntries bounds the per-piece cache; it is cleared when full.
const maxCacheEntries = 1 << 18

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// build makes a Tokenizer from its merges (pairs of ids, each id earlier than
// its merge), special tokens and pre-tokenizer. A merge whose text already is
// a token reuses that token's id, as Hugging Face's trainer does, so token
// texts are unique.
func build(merges [][2]int32, specials []string, pre Pretokenizer) (*Tokenizer, error) {
	if int(pre) >= len(pretokenizers) {
		return nil, fmt.Errorf("tokenizer: unknown pre-tokenizer %d", pre)
	}
	t := &Tokenizer{
		merges: merges,
		ranks:  make(map[uint64]mergeTo, len(merges)),
		tokens: make([]string, 256, 256+len(merges)+len(specials)),
		pre:    pre,
		split:  pretokenizers[pre].split,
		cache:  make(map[string][]int32),
	}
	byText := make(map[string]int32, 256+len(merges))
	for b := 0; b < 256; b++ {
		t.tokens[b] = string([]byte{byte(b)})
		byText[t.tokens[b]] = int32(b)
	}
	for rank, m := range merges {
		n := int32(len(t.tokens))
		if m[0] < 0 || m[0] >= n || m[1] < 0 || m[1] >= n {
			return nil, fmt.Errorf("tokenizer: merge %d (%d, %d) uses an id not yet defined (have %d)", rank, m[0], m[1], n)
		}
		text := t.tokens[m[0]] + t.tokens[m[1]]
		id, ok := byText[text]
		if !ok {
			id = n
			t.tokens = append(t.tokens, text)
			byText[text] = id
		}
		key := pairKey(m[0], m[1])
		if _, dup := t.ranks[key]; dup {
			return nil, fmt.Errorf("tokenizer: merge %d (%d, %d) repeats an earlier merge", rank, m[0], m[1])
		}
		t.ranks[key] = mergeTo{rank: int32(rank), id: id}
	}
	if pretokenizers[pre].ignoreMerges {
		t.whole = byText
	}
	if err := t.setSpecials(specials); err != nil {
		return nil, err
	}
	return t, nil
}

// Pretokenizer returns the pre-tokenizer the tokenizer splits text with.
func (t *Tokenizer) Pretokenizer() Pretokenizer { return t.pre }

func (t *Tokenizer) setSpecials(specials []string) error {
	t.specialBase = int32(len(t.tokens))
	t.special = make(map[string]int32, len(specials))
	for _, s := range specials {
		if s == "" {
			return fmt.Errorf("tokenizer: empty special token")
		}
		if _, dup := t.special[s]; dup {
			return fmt.Errorf("tokenizer: special token %q listed twice", s)
		}
		t.special[s] = int32(len(t.tokens))
		t.tokens = append(t.tokens, s)
		t.firstSpecialByte[s[0]] = true
	}
	t.trie = []trieNode{{id: -1}}
	for _, s := range specials {
		node := int32(0)
		for i := 0; i < len(s); i++ {
			node = t.trieChild(node, s[i], true)
		}
		t.trie[node].id = t.special[s]
	}
	t.specials = append([]string(nil), specials...)
	return nil
}

// VocabSize is the number of token ids: bytes, merged tokens and specials.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// NumMerges is the number of BPE merges.
func (t *Tokenizer) NumMerges() int { return len(t.merges) }

// Specials returns the special tokens in id order.
func (t *Tokenizer) Specials() []string { return append([]string(nil), t.specials...) }

// SpecialID returns the id of a special token such as "<|frame_sep|>".
func (t *Tokenizer) SpecialID(text string) (int32, bool) {
	id, ok := t.special[text]
	return id, ok
}

// MustSpecialID is SpecialID for tokens the caller knows exist; it panics
// otherwise (a programming error, not bad input).
func (t *Tokenizer) MustSpecialID(text string) int32 {
	id, ok := t.special[text]
	if !ok {
		panic(fmt.Sprintf("tokenizer: no special token %q", text))
	}
	return id
}

// IsSpecial reports whether id is a special token.
func (t *Tokenizer) IsSpecial(id int32) bool {
	return id >= t.specialBase && int(id) < len(t.tokens)
}

// Token returns the text of one id: its raw bytes (possibly a partial UTF-8
// sequence) or a special token's text. ok is false for an id out of range.
func (t *Tokenizer) Token(id int32) (text string, ok bool) {
	if id < 0 || int(id) >= len(t.tokens) {
		return "", false
	}
	return t.tokens[id], true
}

// Decode concatenates the tokens' bytes. An id out of range decodes to
// U+FFFD, so a model's bad output shows instead of vanishing.
func (t *Tokenizer) Decode(ids []int32) string {
	var sb strings.Builder
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.tokens) {
			sb.WriteString("\uFFFD")
			continue
		}
		sb.WriteString(t.tokens[id])
	}
	return sb.String()
}

// Encode returns the ids of s. Special tokens anywhere in s become their
// single ids; the rest is split into pieces and merged.
func (t *Tokenizer) Encode(s string) []int32 {
	ids := make([]int32, 0, len(s)/3+1)
	t.splitSpecials(s, func(text string, special int32) {
		if special >= 0 {
			ids = append(ids, special)
			return
		}
		t.split(text, func(piece string) { ids = append(ids, t.encodePiece(piece)...) })
	})
	return ids
}

// EncodeOrdinary encodes s as plain text: special-token texts in s are
// encoded as their bytes, not as special ids.
func (t *Tokenizer) EncodeOrdinary(s string) []int32 {
	ids := make([]int32, 0, len(s)/3+1)
	t.split(s, func(piece string) { ids = append(ids, t.encodePiece(piece)...) })
	return ids
}

// trieNode is one node of the specials' byte trie.
type trieNode struct {
	bytes    []byte  // the children's bytes
	children []int32 // the children's nodes
	id       int32   // the special ending here, or -1
}

// trieChild returns node's child for byte b (creating it when add is set),
// or -1.
func (t *Tokenizer) trieChild(node int32, b byte, add bool) int32 {
	n := &t.trie[node]
	for k, c := range n.bytes {
		if c == b {
			return n.children[k]
		}
	}
	if !add {
		return -1
	}
	child := int32(len(t.trie))
	n.bytes = append(n.bytes, b)
	n.children = append(n.children, child)
	t.trie = append(t.trie, trieNode{id: -1})
	return child
}

// specialAt returns the longest special token starting at s[i], or -1.
func (t *Tokenizer) specialAt(s string, i int) (id int32, length int) {
	id = -1
	node := int32(0)
	for j := i; j < len(s); j++ {
		if node = t.trieChild(node, s[j], false); node < 0 {
			break
		}
		if t.trie[node].id >= 0 {
			id, length = t.trie[node].id, j+1-i
		}
	}
	return id, length
}

// splitSpecials calls fn with the plain-text runs of s (special = -1) and the
// special tokens in it (their ids), in order. At one position the longest
// special token wins.
func (t *Tokenizer) splitSpecials(s string, fn func(text string, special int32)) {
	start := 0
	for i := 0; i < len(s); i++ {
		if !t.firstSpecialByte[s[i]] {
			continue
		}
		id, n := t.specialAt(s, i)
		if id < 0 {
			continue
		}
		if start < i {
			fn(s[start:i], -1)
		}
		fn(s[i:i+n], id)
		i += n - 1
		start = i + 1
	}
	if start < len(s) {
		fn(s[start:], -1)
	}
}

// encodePiece returns the ids of one pre-token piece, from the cache when it
// can. The returned slice must not be modified.
func (t *Tokenizer) encodePiece(piece string) []int32 {
	if len(piece) == 1 {
		return byteIDs[piece[0] : int(piece[0])+1]
	}
	t.mu.RLock()
	ids, ok := t.cache[piece]
	t.mu.RUnlock()
	if ok {
		return ids
	}
	if id, ok := t.whole[piece]; ok {
		ids = []int32{id}
	} else {
		ids = t.mergePiece(piece)
	}
	t.mu.Lock()
	if len(t.cache) >= maxCacheEntries {
		clear(t.cache)
	}
	t.cache[piece] = ids
	t.mu.Unlock()
	return ids
}

// byteIDs[b] = b: the one-byte pieces need no lookup.
var byteIDs = func() []int32 {
	ids := make([]int32, 256)
	for i := range ids {
		ids[i] = int32(i)
	}
	return ids
}()

// symbol is one token of a piece being merged, in a linked list.
type symbol struct {
	id         int32
	prev, next int32 // indices, -1 at the ends
	gone       bool  // merged into its left neighbour
}

// candidate is an adjacent pair that a merge could join.
type candidate struct {
	rank int32
	pos  int32 // the left symbol
}

type candidateHeap []candidate

func (h candidateHeap) Len() int { return len(h) }
func (h candidateHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].pos < h[j].pos
}
func (h candidateHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candidateHeap) Push(x any)   { *h = append(*h, x.(candidate)) }
func (h *candidateHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergePiece applies the merges to one piece: always the lowest-ranked
// adjacent pair, leftmost first (Hugging Face's Word::merge_all), in
// O(n log n) so that a long piece cannot stall encoding.
func (t *Tokenizer) mergePiece(piece string) []int32 {
	syms := make([]symbol, len(piece))
	for i := range syms {
		syms[i] = symbol{id: int32(piece[i]), prev: int32(i - 1), next: int32(i + 1)}
	}
	syms[len(syms)-1].next = -1
	h := make(candidateHeap, 0, len(piece))
	for i := 0; i+1 < len(syms); i++ {
		if m, ok := t.ranks[pairKey(syms[i].id, syms[i+1].id)]; ok {
			h = append(h, candidate{m.rank, int32(i)})
		}
	}
	heap.Init(&h)
	for h.Len() > 0 {
		c := heap.Pop(&h).(candidate)
		left := &syms[c.pos]
		if left.gone || left.next < 0 {
			continue
		}
		right := &syms[left.next]
		m, ok := t.ranks[pairKey(left.id, right.id)]
		if !ok || m.rank != c.rank {
			continue // stale: one side has changed since this was pushed
		}
		left.id = m.id
		right.gone = true
		left.next = right.next
		if left.next >= 0 {
			syms[left.next].prev = c.pos
		}
		if left.prev >= 0 {
			if m, ok := t.ranks[pairKey(syms[left.prev].id, left.id)]; ok {
				heap.Push(&h, candidate{m.rank, left.prev})
			}
		}
		if left.next >= 0 {
			if m, ok := t.ranks[pairKey(left.id, syms[left.next].id)]; ok {
				heap.Push(&h, candidate{m.rank, c.pos})
			}
		}
	}
	ids := make([]int32, 0, 4)
	for i := int32(0); i >= 0; i = syms[i].next {
		ids = append(ids, syms[i].id)
	}
	return ids
}
