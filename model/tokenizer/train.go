package tokenizer

import (
	"container/heap"
	"fmt"
	"iter"
	"runtime"
	"sort"
	"sync"
)

// MinPairCount is the fewest occurrences a pair needs to be merged in
// training: a pair seen once teaches nothing, so training stops there even
// if the vocabulary is not full.
const MinPairCount = 2

// Train learns BPE merges from texts until the vocabulary (256 bytes, merged
// tokens and specials) holds vocabSize tokens, or no pair occurs at least
// MinPairCount times. Special tokens in the texts are cut out first, so no
// merge crosses or enters them. The result depends only on the texts'
// content and order-free counts: training is deterministic. Text is split
// with ndb's pre-tokenizer (PretokenizerNDB); TrainWith chooses another.
//
// Counting is parallel; merging updates pair counts incrementally (only the
// words that hold the merged pair are touched), so tens of MB train in
// seconds.
func Train(texts iter.Seq[string], vocabSize int, specials []string) (*Tokenizer, error) {
	return TrainWith(texts, vocabSize, specials, PretokenizerNDB)
}

// TrainWith is Train with the pre-tokenizer pre: the pieces counted and
// merged are pre's, and the tokenizer encodes with pre.
func TrainWith(texts iter.Seq[string], vocabSize int, specials []string, pre Pretokenizer) (*Tokenizer, error) {
	if vocabSize < 256+len(specials) {
		return nil, fmt.Errorf("tokenizer: vocab size %d is below the %d bytes and specials", vocabSize, 256+len(specials))
	}
	// Specials only, to split the training text on them.
	splitter, err := build(nil, specials, pre)
	if err != nil {
		return nil, err
	}
	counts := countPieces(texts, splitter)
	words := make([]trainWord, 0, len(counts))
	for piece, n := range counts {
		if len(piece) < 2 {
			continue
		}
		ids := make([]int32, len(piece))
		for i := 0; i < len(piece); i++ {
			ids[i] = int32(piece[i])
		}
		words = append(words, trainWord{text: piece, ids: ids, count: n})
	}
	sort.Slice(words, func(i, j int) bool { return words[i].text < words[j].text })
	merges := learnMerges(words, vocabSize-256-len(specials))
	return build(merges, specials, pre)
}

type trainWord struct {
	text  string
	ids   []int32
	count int64
}

// countPieces counts every pre-token piece of the texts, on all cores.
func countPieces(texts iter.Seq[string], splitter *Tokenizer) map[string]int64 {
	workers := runtime.GOMAXPROCS(0)
	batches := make(chan []string, workers*2)
	results := make([]map[string]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make(map[string]int64)
			for batch := range batches {
				for _, text := range batch {
					splitter.splitSpecials(text, func(plain string, special int32) {
						if special < 0 {
							splitter.split(plain, func(piece string) { local[piece]++ })
						}
					})
				}
			}
			results[w] = local
		}()
	}
	const batchBytes = 1 << 20
	var batch []string
	size := 0
	for text := range texts {
		batch = append(batch, text)
		if size += len(text); size >= batchBytes {
			batches <- batch
			batch, size = nil, 0
		}
	}
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	wg.Wait()
	total := results[0]
	for _, m := range results[1:] {
		for k, v := range m {
			total[k] += v
		}
	}
	return total
}

// pairCount is a heap entry: a pair and its count when pushed (stale entries
// are re-checked when popped).
type pairCount struct {
	pair  uint64
	count int64
}

type pairHeap []pairCount

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	if h[i].count != h[j].count {
		return h[i].count > h[j].count
	}
	return h[i].pair < h[j].pair // ties: the smaller ids, deterministically
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pairCount)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// learnMerges finds up to newTokens merges whose texts are new tokens.
func learnMerges(words []trainWord, newTokens int) [][2]int32 {
	counts := make(map[uint64]int64)
	where := make(map[uint64][]int32) // pair -> words that hold it (may repeat or be stale)
	for wi, w := range words {
		for i := 0; i+1 < len(w.ids); i++ {
			k := pairKey(w.ids[i], w.ids[i+1])
			counts[k] += w.count
			where[k] = append(where[k], int32(wi))
		}
	}
	h := make(pairHeap, 0, len(counts))
	for k, c := range counts {
		h = append(h, pairCount{k, c})
	}
	heap.Init(&h)

	hint := 256 + min(newTokens, 1<<16) // newTokens may be far more than the corpus allows
	tokens := make([]string, 256, hint)
	byText := make(map[string]int32, hint)
	for b := range 256 {
		tokens[b] = string([]byte{byte(b)})
		byText[tokens[b]] = int32(b)
	}
	merged := make(map[uint64]bool)
	seen := make([]int32, len(words)) // round that last touched each word
	for i := range seen {
		seen[i] = -1
	}
	var merges [][2]int32
	grown := make(map[uint64]bool)
	for round := int32(0); len(tokens)-256 < newTokens && h.Len() > 0; round++ {
		top := heap.Pop(&h).(pairCount)
		if c := counts[top.pair]; c != top.count {
			if c >= MinPairCount {
				heap.Push(&h, pairCount{top.pair, c})
			}
			continue
		}
		if top.count < MinPairCount {
			break
		}
		a, b := int32(top.pair>>32), int32(uint32(top.pair))
		text := tokens[a] + tokens[b]
		id, ok := byText[text]
		if !ok {
			id = int32(len(tokens))
			tokens = append(tokens, text)
			byText[text] = id
		}
		if !merged[top.pair] {
			merged[top.pair] = true
			merges = append(merges, [2]int32{a, b})
		}
		clear(grown)
		for _, wi := range where[top.pair] {
			if seen[wi] == round {
				continue
			}
			seen[wi] = round
			w := &words[wi]
			w.ids = mergeWord(w.ids, a, b, id, func(p uint64, delta int64) {
				counts[p] += delta * w.count
				if delta > 0 {
					grown[p] = true
					where[p] = append(where[p], wi)
				}
			})
		}
		delete(counts, top.pair)
		delete(where, top.pair)
		for p := range grown {
			if c := counts[p]; c >= MinPairCount && p != top.pair {
				heap.Push(&h, pairCount{p, c})
			}
		}
	}
	return merges
}

// mergeWord replaces each (a, b), left to right, by id in ids, reporting the
// neighbouring pairs that disappear (-1) and appear (+1).
func mergeWord(ids []int32, a, b, id int32, change func(pair uint64, delta int64)) []int32 {
	out := ids[:0]
	for i := 0; i < len(ids); {
		if i+1 < len(ids) && ids[i] == a && ids[i+1] == b {
			if len(out) > 0 {
				prev := out[len(out)-1]
				change(pairKey(prev, a), -1)
				change(pairKey(prev, id), +1)
			}
			if i+2 < len(ids) {
				next := ids[i+2]
				change(pairKey(b, next), -1)
				change(pairKey(id, next), +1)
			}
			out = append(out, id)
			i += 2
			continue
		}
		out = append(out, ids[i])
		i++
	}
	return out
}
