"""A tokenizer.json encoder in plain Python (no `tokenizers` library).

Reads the tokenizer.json that ndb exports and encodes texts as Hugging Face's
`tokenizers` would: split on the added (special) tokens, leftmost-longest;
split the rest with the Split pre-tokenizer's regex; map bytes to GPT-2's
byte-level alphabet; apply the BPE merges by rank (a piece that is one token
is that token when the model has ignore_merges). The regex is translated
from Oniguruma's \\p{L}, \\p{N} and \\s to Python `re` classes built from
unicodedata, so it shares no code with ndb's hand-written scanner.

    /usr/bin/python3 hf_tokenizer.py TOKENIZER_JSON TEXTS_JSON OUT_JSON

TEXTS_JSON is a JSON list of strings; OUT_JSON gets a list of id lists.
Debian's python3 has no `tokenizers`; a trainer can use this module instead.
"""
import json
import re
import sys
import unicodedata

# Unicode White_Space (what Oniguruma's \s and Go's unicode.IsSpace match;
# Python's str.isspace also counts U+001C..U+001F, so it is not used).
WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
               (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]


def class_body(ranges):
    return "".join(re.escape(chr(a)) if a == b else re.escape(chr(a)) + "-" + re.escape(chr(b)) for a, b in ranges)


def category_ranges(prefix):
    ranges, start, prev = [], None, None
    for cp in range(sys.maxunicode + 1):
        hit = unicodedata.category(chr(cp)).startswith(prefix)
        if hit and start is None:
            start = cp
        if not hit and start is not None:
            ranges.append((start, cp - 1))
            start = None
    if start is not None:
        ranges.append((start, sys.maxunicode))
    return ranges


def translate(pattern):
    """Oniguruma pattern -> Python re pattern, for the constructs ndb uses."""
    L = class_body(category_ranges("L"))
    N = class_body(category_ranges("N"))
    WS = class_body(WHITE_SPACE)
    WS_NO_BREAK = class_body([r for r in WHITE_SPACE if r != (0x09, 0x0D)] + [(0x09, 0x09), (0x0B, 0x0C)])
    out, i, in_class = [], 0, False
    while i < len(pattern):
        rest = pattern[i:]
        if rest.startswith("[^\\S\\r\\n]"):
            out.append("[" + WS_NO_BREAK + "]")
            i += len("[^\\S\\r\\n]")
            continue
        for esc, body, negated in (("\\p{L}", L, False), ("\\p{N}", N, False), ("\\s", WS, False), ("\\S", WS, True)):
            if rest.startswith(esc):
                if in_class:
                    assert not negated, "\\S inside a class is only supported as [^\\S\\r\\n]"
                    out.append(body)
                else:
                    out.append(("[^" if negated else "[") + body + "]")
                i += len(esc)
                break
        else:
            if rest[0] == "\\":
                out.append(rest[:2])
                i += 2
                continue
            if rest[0] == "[":
                in_class = True
            elif rest[0] == "]":
                in_class = False
            out.append(rest[0])
            i += 1
    return re.compile("".join(out))


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


class Tokenizer:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            tj = json.load(f)
        model = tj["model"]
        assert model["type"] == "BPE"
        self.vocab = model["vocab"]
        self.ignore_merges = model.get("ignore_merges", False)
        self.ranks = {}
        for rank, m in enumerate(model["merges"]):
            a, b = m.split(" ") if isinstance(m, str) else m
            self.ranks[(a, b)] = rank
        self.added = {t["content"]: t["id"] for t in tj["added_tokens"]}
        alternation = "|".join(re.escape(s) for s in sorted(self.added, key=len, reverse=True))
        self.added_re = re.compile("(" + alternation + ")") if self.added else None
        pre = tj["pre_tokenizer"]
        assert pre["type"] == "Sequence"
        split, byte_level = pre["pretokenizers"]
        assert split["type"] == "Split" and split["behavior"] == "Isolated" and not split["invert"]
        assert byte_level["type"] == "ByteLevel" and not byte_level["use_regex"]
        self.split_re = translate(split["pattern"]["Regex"])
        self.byte_map = bytes_to_unicode()
        self.cache = {}

    def pieces(self, text):
        """Isolated split: the matches, and any unmatched text between them."""
        out, pos = [], 0
        for m in self.split_re.finditer(text):
            if m.start() > pos:
                out.append(text[pos:m.start()])
            if m.end() > m.start():
                out.append(m.group())
            pos = m.end()
        if pos < len(text):
            out.append(text[pos:])
        return out

    def bpe(self, piece):
        if piece in self.cache:
            return self.cache[piece]
        symbols = [self.byte_map[b] for b in piece.encode("utf-8")]
        if self.ignore_merges and "".join(symbols) in self.vocab:
            symbols = ["".join(symbols)]
        while len(symbols) > 1:
            best = min(range(len(symbols) - 1), key=lambda i: (self.ranks.get((symbols[i], symbols[i + 1]), 1 << 60), i))
            if (symbols[best], symbols[best + 1]) not in self.ranks:
                break
            symbols[best:best + 2] = [symbols[best] + symbols[best + 1]]
        ids = [self.vocab[s] for s in symbols]
        self.cache[piece] = ids
        return ids

    def encode(self, text):
        ids = []
        parts = self.added_re.split(text) if self.added_re else [text]
        for i, part in enumerate(parts):
            if i % 2 == 1:
                ids.append(self.added[part])
            elif part:
                for piece in self.pieces(part):
                    ids.extend(self.bpe(piece))
        return ids


def main():
    tok_path, texts_path, out_path = sys.argv[1:4]
    tok = Tokenizer(tok_path)
    with open(texts_path, encoding="utf-8") as f:
        texts = json.load(f)
    with open(out_path, "w") as f:
        json.dump([tok.encode(t) for t in texts], f)


if __name__ == "__main__":
    main()
