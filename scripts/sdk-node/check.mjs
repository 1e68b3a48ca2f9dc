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

// Tool calling: offer the read tools (schemas as in TOOLS11.md §3), run the
// calls the model returns against a small in-memory workspace, send the
// results back, and read the final answer in the atom schema.
const files = {
  "README.md": "# auth\nSession handling for the demo service.\n",
  "auth/session.go": [
    "package auth", "", "import \"net/http\"", "",
    "// Check compares the session token from the request with the stored one.",
    "func Check(r *http.Request, stored string) bool {",
    "\ttoken := r.Header.Get(\"X-Session-Token\")",
    "\treturn token == stored // timing leak: not constant-time",
    "}", "",
  ].join("\n"),
};
const ok = (o) => JSON.stringify({ ok: true, ...o });
const refuse = (kind, error) => JSON.stringify({ ok: false, refusal: kind, error });
const clean = (p) => (p ?? ".").replace(/^\.\//, "") || ".";
const tools = {
  list_dir({ path }) {
    const dir = clean(path);
    if (dir.startsWith("/") || dir.split("/").includes("..")) return refuse("escape", "path escapes the root");
    const prefix = dir === "." ? "" : dir + "/";
    const names = new Map();
    for (const [f, text] of Object.entries(files)) {
      if (!f.startsWith(prefix)) continue;
      const rest = f.slice(prefix.length); const i = rest.indexOf("/");
      names.set(i < 0 ? rest : rest.slice(0, i), i < 0 ? { name: rest, type: "file", size: text.length } : { name: rest.slice(0, i), type: "dir" });
    }
    if (names.size === 0) return refuse("not_found", `${dir}: no such directory`);
    return ok({ path: dir, entries: [...names.values()].sort((a, b) => a.name.localeCompare(b.name)), truncated: false });
  },
  read_file({ path, start_line, end_line }) {
    const p = clean(path);
    if (p.startsWith("/") || p.split("/").includes("..")) return refuse("escape", "path escapes the root");
    if (!(p in files)) return refuse("not_found", `${p}: no such file`);
    const lines = files[p].split("\n"); const s = start_line ?? 1; const e = Math.min(end_line ?? lines.length, lines.length);
    const content = lines.slice(s - 1, e).map((l, i) => `${s + i}\t${l}`).join("\n");
    return ok({ path: p, start_line: s, end_line: e, total_lines: lines.length, truncated: false, content });
  },
  grep({ pattern, context }) {
    // RE2 writes flags inline ("(?i)…", as the mock's honest persona
    // does); JavaScript takes them apart. A pattern it cannot compile is
    // the model's mistake: an answer, not a crash.
    const [, flags = "", source] = /^(?:\(\?([ims]+)\))?([\s\S]*)$/.exec(pattern);
    let re;
    try { re = new RegExp(source, flags); } catch (e) { return refuse("bad_arguments", e.message); }
    const n = context ?? 0; const matches = [];
    for (const f of Object.keys(files).sort()) {
      const lines = files[f].split("\n");
      lines.forEach((l, i) => { if (re.test(l)) matches.push({ path: f, line: i + 1, text: l, ...(n ? { before: lines.slice(Math.max(0, i - n), i), after: lines.slice(i + 1, i + 1 + n) } : {}) }); });
    }
    return ok({ pattern, matches, truncated: false });
  },
  glob({ pattern }) { return ok({ pattern, paths: Object.keys(files).sort(), truncated: false }); },
};
const obj = (props, required) => ({ type: "object", properties: props, required, additionalProperties: false });
const toolDefs = [
  ["list_dir", "List a directory of the workspace.", obj({ path: { type: "string" } }, ["path"])],
  ["read_file", "Read a file's lines.", obj({ path: { type: "string" }, start_line: { type: ["integer", "null"] }, end_line: { type: ["integer", "null"] } }, ["path", "start_line", "end_line"])],
  ["grep", "Search files with an RE2 pattern.", obj({ pattern: { type: "string" }, path_glob: { type: ["string", "null"] }, context: { type: ["integer", "null"] } }, ["pattern", "path_glob", "context"])],
  ["glob", "Match paths with a glob.", obj({ pattern: { type: "string" } }, ["pattern"])],
].map(([name, description, parameters]) => ({ type: "function", function: { name, description, parameters, strict: true } }));
const citation = obj({ path: { type: "string" }, start_line: { type: "integer" }, end_line: { type: "integer" }, quote: { type: "string" } }, ["path", "start_line", "end_line", "quote"]);
const atom = obj({ status: { type: "string", enum: ["complete", "partial", "failed"] }, content: { type: "string" }, confidence: { type: "number" },
  evidence: { type: "array", items: citation }, self_score: { type: "number" } }, ["status", "content", "confidence", "evidence", "self_score"]);
const messages = [
  { role: "system", content: "You are a worker. Read the workspace with the tools and cite the lines you rely on." },
  // The brief in the untrusted block swarm's prompts put it in: the mock's
  // honest persona greps for its key terms (an RE2 pattern) before reading.
  { role: "user", content: '<untrusted kind="brief" nonce="0a1b2c3d4e5f">\nReview how the session token is compared in the auth package (timing leak).\n</untrusted kind="brief" nonce="0a1b2c3d4e5f">' },
];
let final = null; let toolTurns = 0; let toolCalls = 0;
for (let turn = 0; turn < 10 && !final; turn++) {
  const r = await client.chat.completions.create({ model: "honest", seed: 7, messages, tools: toolDefs, parallel_tool_calls: true,
    response_format: { type: "json_schema", json_schema: { name: "atom", strict: true, schema: atom } } });
  const msg = r.choices[0].message;
  if (msg.tool_calls?.length) {
    if (r.choices[0].finish_reason !== "tool_calls") throw new Error("tool calls with finish_reason " + r.choices[0].finish_reason);
    toolTurns++; toolCalls += msg.tool_calls.length;
    messages.push(msg);
    for (const c of msg.tool_calls) {
      const args = JSON.parse(c.function.arguments);
      const answer = tools[c.function.name] ? tools[c.function.name](args) : refuse("bad_arguments", "unknown tool " + c.function.name);
      console.log(`tool turn ${toolTurns}: ${c.id} ${c.function.name}(${c.function.arguments}) -> ${answer.slice(0, 80)}`);
      messages.push({ role: "tool", tool_call_id: c.id, content: answer });
    }
    continue;
  }
  final = { text: msg.content, usage: r.usage, finish: r.choices[0].finish_reason };
}
if (!final) throw new Error("no final answer after 10 turns");
if (toolTurns === 0) throw new Error("the mock made no tool calls (a mock serve without the personas' tool plans?)");
const answer = JSON.parse(final.text);
if (!answer.evidence.length) throw new Error("the honest persona cited nothing: " + final.text);
for (const e of answer.evidence) {
  const lines = (files[e.path] ?? "").split("\n").slice(e.start_line - 1, e.end_line).join(" ").replace(/\s+/g, " ");
  if (!e.quote || !lines.includes(e.quote.replace(/\s+/g, " ").trim())) throw new Error("citation not in the lines read: " + JSON.stringify(e));
}
console.log(`tools: ${toolTurns} turns, ${toolCalls} calls; final finish: ${final.finish} usage: ${JSON.stringify(final.usage)}`);
console.log(`final: status ${answer.status}, ${answer.evidence.length} citations verified: ${answer.evidence.map(e => `${e.path}:${e.start_line}-${e.end_line}`).join(", ")}`);
