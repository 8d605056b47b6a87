// A minimal OpenAI-compatible completions server (POST /v1/completions) on
// llama.cpp through node-llama-cpp, CPU: enough to drive `ndb debug --engine
// openai --openai-token-ids` with ndb's GGUF where llama.cpp's own
// llama-server is not installed (docs/interop.md). "prompt" is a list of
// token ids (as llama.cpp's server and vLLM accept) or a string (tokenized
// by llama.cpp: not ndb's tokens, see docs/interop.md); greedy decoding
// (temperature 0) up to max_tokens, a stop string (cut, as servers do) or
// the end-of-text token; n = 1; the chosen tokens' log-probabilities on
// request ("logprobs"), which ndb turns into its confidence figures.
// Listens on 127.0.0.1 only. Usage: node serve.mjs MODEL.gguf [PORT] [THREADS]
import http from "node:http";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const [modelPath, port = "8080", threads = "2"] = process.argv.slice(2);
if (!modelPath) {
    console.error("usage: node serve.mjs MODEL.gguf [PORT] [THREADS]");
    process.exit(2);
}
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({
    contextSize: model.trainContextSize, threads: Number(threads), flashAttention: false,
    experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
});
const seq = context.getSequence();
const eos = model.tokens.eos;
const vocab = Number(model.fileInfo.metadata.llama.vocab_size); // ndb's GGUF writes it

async function complete(req) {
    const prompt = Array.isArray(req.prompt) ? req.prompt : model.tokenize(String(req.prompt ?? ""), true);
    if (prompt.length === 0 || !prompt.every((t) => Number.isInteger(t) && t >= 0 && t < vocab))
        throw new Error("prompt: a string or a non-empty list of token ids in the vocabulary");
    const maxTokens = Math.min(Number(req.max_tokens ?? 16), context.contextSize - prompt.length);
    const stops = (Array.isArray(req.stop) ? req.stop : req.stop ? [req.stop] : []).filter(Boolean);
    await seq.clearHistory();
    let text = "", finish = "length";
    const tokens = [], logprobs = [];
    if (maxTokens > 0) {
        for await (const { token: t, confidence } of seq.evaluateWithMetadata(prompt, { confidence: true }, { temperature: 0, yieldEogToken: true })) {
            if (t === eos) { finish = "stop"; break; }
            const piece = model.detokenize([t], true);
            tokens.push(piece);
            logprobs.push(Math.log(confidence));
            text += piece;
            const at = Math.min(...stops.map((s) => text.indexOf(s)).filter((i) => i >= 0));
            if (Number.isFinite(at)) { text = text.slice(0, at); finish = "stop"; break; }
            if (tokens.length >= maxTokens) break;
        }
    }
    const choice = { index: 0, text, finish_reason: finish };
    if (req.logprobs) choice.logprobs = { tokens, token_logprobs: logprobs };
    return { object: "text_completion", model: req.model ?? "ndb", choices: [choice] };
}

let queue = Promise.resolve(); // one sequence: requests run one at a time
const server = http.createServer((request, response) => {
    const reply = (code, body) => {
        response.writeHead(code, { "Content-Type": "application/json" });
        response.end(JSON.stringify(body));
    };
    if (request.method !== "POST" || request.url !== "/v1/completions") return reply(404, { error: { message: "POST /v1/completions only" } });
    let body = "";
    request.on("data", (c) => { body += c; if (body.length > 16 << 20) request.destroy(); });
    request.on("end", () => {
        queue = queue.then(async () => {
            try {
                const t0 = Date.now();
                const r = await complete(JSON.parse(body));
                if (process.env.SERVE_LOG) console.error(`${Date.now() - t0} ms ${JSON.stringify(r.choices[0]).slice(0, 120)}`);
                reply(200, r);
            } catch (e) {
                reply(400, { error: { message: String(e.message ?? e) } });
            }
        });
    });
});
server.listen(Number(port), "127.0.0.1", () => console.error(`serving ${modelPath} on http://127.0.0.1:${port}/v1 (${threads} threads)`));
