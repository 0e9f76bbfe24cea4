// Reference ids from @huggingface/tokenizers (tokenizers.js), an implementation of tokenizer.json
// independent of cortiq. For each line of CORPUS (a JSON string) writes one line to OUT:
//   {"ids": [...], "ids_special": [...], "decoded": "..."}
// ids: encode without special tokens; ids_special: with (the post-processor's <bos>); decoded:
// decode(ids) (skip_special_tokens false).
//
//   node encode.mjs TOKENIZER_JSON TOKENIZER_CONFIG_JSON|- CORPUS OUT
import fs from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";

const [tokenizerPath, configPath, corpusPath, outPath] = process.argv.slice(2);
const tokenizerJson = JSON.parse(fs.readFileSync(tokenizerPath, "utf8"));
const config = configPath === "-" ? {} : JSON.parse(fs.readFileSync(configPath, "utf8"));
const tokenizer = new Tokenizer(tokenizerJson, config);
const lines = fs.readFileSync(corpusPath, "utf8").split("\n").filter((l) => l.length > 0);
const out = [];
for (const line of lines) {
  const text = JSON.parse(line);
  const ids = tokenizer.encode(text, { add_special_tokens: false }).ids;
  const idsSpecial = tokenizer.encode(text, { add_special_tokens: true }).ids;
  const decoded = ids.length === 0 ? "" : tokenizer.decode(ids, { skip_special_tokens: false });
  out.push(JSON.stringify({ ids, ids_special: idsSpecial, decoded }));
}
fs.writeFileSync(outPath, out.join("\n") + "\n");
console.error(`${lines.length} lines → ${outPath}`);
