// Decode speed of llama.cpp (node-llama-cpp, CPU) on a GGUF, measured as
// `ndb bench infer` measures ndb's: a 256-token prefill, then greedy decoding
// of N tokens one at a time (llama.cpp's own sampling loop); best of
// REPEAT runs, since on a shared machine load only adds time.
// Usage: node bench.mjs MODEL.gguf THREADS [N=128] [REPEAT=3]
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const [modelPath, threads, n = "128", repeat = "3"] = process.argv.slice(2);
if (!modelPath || !threads) {
    console.error("usage: node bench.mjs MODEL.gguf THREADS [N] [REPEAT]");
    process.exit(2);
}
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath });
const vocab = Number(model.fileInfo.metadata.llama.vocab_size);
const context = await model.createContext({ contextSize: 512, batchSize: 512, threads: Number(threads), flashAttention: false });
const seq = context.getSequence();
const prompt = Array.from({ length: 256 }, (_, i) => (i * 7919) % vocab); // ndb bench infer's prompt
let best = 0, bestPrefill = 0;
for (let r = 0; r < Number(repeat); r++) {
    await seq.clearHistory();
    const t0 = performance.now();
    await seq.evaluateWithoutGeneratingNewTokens(prompt);
    const t1 = performance.now();
    let k = 0;
    // The first generated token costs a one-token decode of the last prompt
    // token's successor, as every later one does.
    for await (const _ of seq.evaluate([prompt.at(-1)], { temperature: 0 })) if (++k >= Number(n)) break;
    const t2 = performance.now();
    best = Math.max(best, Number(n) / ((t2 - t1) / 1000));
    bestPrefill = Math.max(bestPrefill, prompt.length / ((t1 - t0) / 1000));
}
console.log(JSON.stringify({ engine: "llama.cpp (node-llama-cpp 3.21.1, CPU)", threads: Number(threads), decode_tokens_per_s: Math.round(best), prefill_tokens_per_s: Math.round(bestPrefill), tokens: Number(n) }));
await context.dispose();
