// Outside check of cortiq-server with the official OpenAI Node.js client (npm `openai`), not part
// of ctest (it needs the npm registry). Run by tests/server/openai_client/run.sh, which installs
// the package in a temporary directory:
//   tests/server/openai_client/run.sh build/bin/cortiq-server MODEL.cortiq
// Checks: models.list, a non-streamed chat completion, a streamed one (its deltas concatenate to
// the non-streamed text, usage at the end), a completion, concurrent streams, and that a bad
// request surfaces as the client's APIError with status 400 and the member as `param`.
import OpenAI from "openai";

const baseURL = process.argv[2];
const client = new OpenAI({ baseURL, apiKey: "check-key", maxRetries: 0 });
const fail = (message) => { console.error("FAIL: " + message); process.exit(1); };

const models = await client.models.list();
const model = models.data[0].id;
console.log("models:", models.data.map((m) => m.id).join(", "));

const messages = [{ role: "user", content: "Say hello in three words." }];
const whole = await client.chat.completions.create({ model, messages, temperature: 0, max_tokens: 16 });
const text = whole.choices[0].message.content;
console.log("chat:", JSON.stringify(text), whole.choices[0].finish_reason, JSON.stringify(whole.usage));

const stream = await client.chat.completions.create({
  model, messages, temperature: 0, max_tokens: 16, stream: true,
  stream_options: { include_usage: true },
});
let streamed = "";
let usage = null;
for await (const chunk of stream) {
  if (chunk.choices.length > 0) streamed += chunk.choices[0].delta?.content ?? "";
  if (chunk.usage) usage = chunk.usage;
}
if (streamed !== text) fail(`stream ${JSON.stringify(streamed)} != ${JSON.stringify(text)}`);
if (!usage) fail("no usage chunk");
console.log("stream: equal to the non-streamed answer; usage", JSON.stringify(usage));

const completion = await client.completions.create({ model, prompt: "The capital of France is", max_tokens: 8, temperature: 0 });
console.log("completion:", JSON.stringify(completion.choices[0].text));

const texts = await Promise.all([0, 1, 2, 3].map(async (i) => {
  const s = await client.chat.completions.create({
    model, temperature: 0, max_tokens: 12, stream: true,
    messages: [{ role: "user", content: `Count to ${i + 3}.` }],
  });
  let t = "";
  for await (const c of s) t += c.choices[0]?.delta?.content ?? "";
  return t;
}));
for (let i = 0; i < 4; ++i) {
  const alone = await client.chat.completions.create({
    model, temperature: 0, max_tokens: 12, messages: [{ role: "user", content: `Count to ${i + 3}.` }],
  });
  if (alone.choices[0].message.content !== texts[i]) fail(`concurrent stream ${i} differs from alone`);
}
console.log("4 concurrent streams: each equal to its answer alone");

try {
  await client.chat.completions.create({ model, messages, temperature: "hot" });
  fail("a bad temperature was accepted");
} catch (e) {
  if (!(e instanceof OpenAI.APIError) || e.status !== 400 || e.param !== "temperature") {
    fail("unexpected error " + e);
  }
  console.log("bad request: APIError", e.status, e.param, JSON.stringify(e.message));
}
console.log("OK");
