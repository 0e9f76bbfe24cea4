// Reference renderings of the official Gemma 4 chat template by @huggingface/jinja, a Jinja
// engine independent of cortiq. For each conversation of CONVERSATIONS ({name, messages,
// add_generation_prompt?, enable_thinking?}) writes {name: rendered text} to OUT.
//
//   node render_chat.mjs TEMPLATE.jinja CONVERSATIONS.json OUT.json
import fs from "node:fs";
import { Template } from "@huggingface/jinja";

const [templatePath, conversationsPath, outPath] = process.argv.slice(2);
const template = new Template(fs.readFileSync(templatePath, "utf8"));
const conversations = JSON.parse(fs.readFileSync(conversationsPath, "utf8"));
const out = {};
for (const c of conversations) {
  const context = {
    messages: c.messages,
    bos_token: "<bos>",
    add_generation_prompt: c.add_generation_prompt ?? false,
  };
  if (c.enable_thinking !== undefined) context.enable_thinking = c.enable_thinking;
  out[c.name] = template.render(context);
}
fs.writeFileSync(outPath, JSON.stringify(out, null, 1) + "\n");
console.error(`${conversations.length} conversations → ${outPath}`);
