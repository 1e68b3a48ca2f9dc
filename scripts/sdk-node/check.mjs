import OpenAI from "openai";
const client = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: "unused" });
const schema = {
  type: "object", additionalProperties: false, required: ["verdicts"],
  properties: { verdicts: { type: "array", items: { type: "object", additionalProperties: false,
    required: ["criterion_id", "passed", "actual", "message"],
    properties: { criterion_id: { type: "string" }, passed: { type: "boolean" }, actual: { type: "string" }, message: { type: "string" } } } } },
};
const r = await client.chat.completions.create({
  model: "honest", seed: 7,
  messages: [{ role: "system", content: "You are a reviewer." }, { role: "user", content: "Review the bundle about rate limiting." }],
  response_format: { type: "json_schema", json_schema: { name: "review", strict: true, schema } },
});
const text = r.choices[0].message.content;
console.log("finish:", r.choices[0].finish_reason, "usage:", JSON.stringify(r.usage));
console.log("content:", text.slice(0, 300));
const doc = JSON.parse(text);
if (!Array.isArray(doc.verdicts) || doc.verdicts.some(v => typeof v.passed !== "boolean")) throw new Error("answer does not match the schema: " + text);
const stream = await client.chat.completions.create({ model: "sloppy", stream: true, stream_options: { include_usage: true },
  messages: [{ role: "user", content: [{ type: "text", text: "Summarise the plan." }] }] });
let out = ""; let usage = null;
for await (const chunk of stream) { out += chunk.choices[0]?.delta?.content ?? ""; if (chunk.usage) usage = chunk.usage; }
if (!out || !usage) throw new Error("stream without content or usage");
console.log("stream:", out.slice(0, 120), "usage:", JSON.stringify(usage));
const models = await client.models.list();
console.log("models:", models.data.map(m => m.id).join(","));
