// Encodes texts with Hugging Face's Tokenizers.js (npm @huggingface/tokenizers,
// a third-party reading of tokenizer.json with Oniguruma-compatible regex
// translation), to check ndb's exported tokenizer.json against it.
//
//   NODE_PATH=... node tokenizers_js.mjs MODULE_DIR TOKENIZER_DIR TEXTS_JSON OUT_JSON
//
// MODULE_DIR is the installed package folder (.../node_modules/@huggingface/tokenizers).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [moduleDir, tokDir, textsPath, outPath] = process.argv.slice(2);
const { Tokenizer } = await import(pathToFileURL(join(moduleDir, "dist", "tokenizers.mjs")).href);
const tokenizerJson = JSON.parse(readFileSync(join(tokDir, "tokenizer.json"), "utf8"));
const tokenizerConfig = JSON.parse(readFileSync(join(tokDir, "tokenizer_config.json"), "utf8"));
const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
const texts = JSON.parse(readFileSync(textsPath, "utf8"));
const out = texts.map((t) => {
  const ids = tokenizer.encode(t, { add_special_tokens: false }).ids;
  const back = ids.length ? tokenizer.decode(ids, { skip_special_tokens: false }) : "";
  return { ids, decoded: back };
});
writeFileSync(outPath, JSON.stringify(out));
