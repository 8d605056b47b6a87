// Loads DIR/model.gguf (ndb export --gguf) in llama.cpp through node-llama-cpp
// on the CPU, feeds it ndb's token ids from DIR/expect.json (written by
// model/hf's TestGGUFFixture) and compares llama.cpp's next-token
// probabilities over the whole vocabulary with ndb's. Exits 1 when any
// differs by more than the tolerance, or when llama.cpp's detokenizer does
// not give ndb's text back. Usage: node compare.mjs DIR [TOLERANCE]
import fs from "node:fs";
import path from "node:path";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const dir = process.argv[2];
const tol = Number(process.argv[3] ?? 1e-4);
if (!dir) {
    console.error("usage: node compare.mjs DIR [TOLERANCE]");
    process.exit(2);
}
const expect = JSON.parse(fs.readFileSync(path.join(dir, "expect.json"), "utf8"));

// build: "never" and gpu: false: use the prebuilt CPU binary of
// @node-llama-cpp/linux-x64 from npm; never download or compile anything.
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: path.join(dir, "model.gguf") });
// An F32 KV cache (llama.cpp's default is F16, which alone moves the
// probabilities by about 1e-3) and no flash attention: the same arithmetic
// as ndb's, up to the order of float32 sums. One thread: llama.cpp's
// threads spin-wait, which on a loaded machine costs more than it saves.
const context = await model.createContext({
    contextSize: 512, batchSize: 512, threads: 1, flashAttention: false,
    experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
});
const seq = context.getSequence();

let worst = 0, positions = 0, failures = 0, greedy = 0, greedyTotal = 0;
for (const [n, c] of expect.checks.entries()) {
    await seq.clearHistory();
    // Ask for the full distribution after every checked position.
    const input = c.ids.map((id, i) => i >= c.from ? [id, { generateNext: { probabilities: true } }] : id);
    const out = await seq.controlledEvaluate(input);
    for (let i = c.from; i < c.ids.length; i++) {
        const got = out[i]?.next?.probabilities;
        const want = c.probs[i - c.from];
        if (!got) throw new Error(`prompt ${n}: no probabilities at position ${i}`);
        let d = 0;
        for (let id = 0; id < want.length; id++) d = Math.max(d, Math.abs((got.get(id) ?? 0) - want[id]));
        worst = Math.max(worst, d);
        positions++;
        let best = 0;
        for (let id = 1; id < want.length; id++) if (want[id] > want[best]) best = id;
        const top = got.entries().next().value[0];
        greedyTotal++;
        if (top === best) greedy++;
        if (d > tol) {
            failures++;
            console.error(`prompt ${n} position ${i}: max |p_llama.cpp - p_ndb| = ${d.toExponential(2)} > ${tol}`);
        }
    }
    // llama.cpp's detokenizer must print the special tokens (user-defined
    // tokens) and the byte-level text exactly as ndb decodes them.
    const text = model.detokenize(c.ids, true);
    if (text !== c.decoded) {
        failures++;
        console.error(`prompt ${n}: llama.cpp detokenizes to ${JSON.stringify(text.slice(0, 200))}..., ndb to ${JSON.stringify(c.decoded.slice(0, 200))}...`);
    }
}
console.log(`gguf-e2e: ${expect.checks.length} prompts, ${positions} positions x ${expect.vocab} tokens: ` +
    `max |p_llama.cpp - p_ndb| = ${worst.toExponential(2)} (tolerance ${tol}); same greedy token at ${greedy}/${greedyTotal}`);
await context.dispose();
await model.dispose();
if (failures > 0) {
    console.error(`gguf-e2e: FAILED (${failures} mismatches)`);
    process.exit(1);
}
