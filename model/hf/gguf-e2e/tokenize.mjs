// Tokenizes texts with llama.cpp (node-llama-cpp, the GGUF's own tokenizer:
// tokenizer.ggml.pre's splitter, the merges, the special tokens) and with
// ndb (`ndb tokenizer encode --json` of the model file the GGUF was
// exported from), and compares the ids. Exits 1 when any text differs.
// The texts: the "text" field of each line of the JSONL files, and a few
// hard cases written here.
//
//   node tokenize.mjs MODEL.gguf MODEL.ndb NDB_BIN FILE.jsonl...
import fs from "node:fs";
import { execFileSync } from "node:child_process";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const [gguf, ndbModel, ndbBin, ...files] = process.argv.slice(2);
if (!ndbBin) {
    console.error("usage: node tokenize.mjs MODEL.gguf MODEL.ndb NDB_BIN FILE.jsonl...");
    process.exit(2);
}
const texts = [
    "def f(x_1, _y):\n    return x_1 ** 2  # don't 'S 're 'LL\n\n\tpass\r\n",
    "x = 1234567 + ½ - Ⅻ; s = 'héllo wörld 日本 🙂'\u00a0\u2028\u3000  \n  ",
    "<|begin_of_text|><|frame_sep|>text<|unknown|><<|src_sep|>|>   ",
];
for (const f of files) {
    for (const line of fs.readFileSync(f, "utf8").split("\n")) {
        if (line.trim() !== "") texts.push(JSON.parse(line).text);
    }
}

const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: gguf });
let same = 0, tokens = 0;
for (const [n, text] of texts.entries()) {
    const want = JSON.parse(execFileSync(ndbBin, ["tokenizer", "encode", "--tokenizer", ndbModel, "--json"],
        { input: text, stdio: ["pipe", "pipe", "ignore"] }).toString());
    const got = Array.from(model.tokenize(text, true));
    tokens += want.length;
    let k = 0;
    while (k < want.length && got[k] === want[k]) k++;
    if (k === want.length && got.length === want.length) {
        same++;
        continue;
    }
    const at = model.detokenize(want.slice(0, k), true).length;
    console.error(`text ${n}: first difference at token ${k} (char ${at}, ${JSON.stringify(text.slice(at, at + 30))}): ` +
        `ndb ${JSON.stringify(want.slice(k, k + 6))}, llama.cpp ${JSON.stringify(got.slice(k, k + 6))}`);
}
console.log(`gguf-e2e: tokenizer.ggml.pre=${model.fileInfo.metadata.tokenizer.ggml.pre}: ` +
    `llama.cpp tokenizes ${same}/${texts.length} texts (${tokens} ndb tokens) exactly as ndb`);
await model.dispose();
if (same !== texts.length) {
    console.error(`gguf-e2e: FAILED (${texts.length - same} texts tokenized differently)`);
    process.exit(1);
}
