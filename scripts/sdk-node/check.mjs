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

// ---- The SDK's helpers and the rest of the chat API, with tools of the
// client's own (the mock calls any tool offered, arguments valid against
// its parameters).
const { z } = await import("zod");
const { zodResponseFormat, zodFunction } = await import("openai/helpers/zod");
const assert = (cond, what) => { if (!cond) throw new Error(what); };

// runTools: the SDK runs the functions the model calls and loops until it
// answers. Arguments are checked by the SDK's parse (zod for zodFunction).
const Weather = z.object({ city: z.string(), unit: z.enum(["celsius", "fahrenheit"]), days: z.number().int().min(1).max(7) });
const ran = [];
const runner = client.beta.chat.completions.runTools({
  model: "honest", seed: 3,
  messages: [{ role: "user", content: "What is the weather in Oslo, and what time is it there?" }],
  tools: [
    zodFunction({ name: "get_weather", parameters: Weather, function: (args) => { ran.push(["get_weather", args]); return { temp_c: 3, sky: "overcast" }; } }),
    { type: "function", function: { name: "get_time", description: "Local time in a city.", parse: JSON.parse,
      parameters: { type: "object", properties: { city: { type: "string" }, tz: { type: "string", pattern: "^[A-Z][a-z]+/[A-Z][a-z]+$" } }, required: ["city", "tz"] },
      function: (args) => { assert(/^[A-Z][a-z]+\/[A-Z][a-z]+$/.test(args.tz), "get_time tz does not match its pattern: " + JSON.stringify(args)); ran.push(["get_time", args]); return "14:05"; } } },
  ],
});
const finalText = await runner.finalContent();
const completions = runner.allChatCompletions();
assert(ran.length >= 1, "runTools: the model called none of the client's tools");
assert(typeof finalText === "string" && finalText.length > 0, "runTools: no final answer");
assert(completions.length === 2, `runTools: ${completions.length} completions, want 2 (a tool turn, then the answer)`);
console.log(`runTools: ran ${ran.map(([n, a]) => `${n}(${JSON.stringify(a)})`).join(", ")}; final: ${finalText.slice(0, 80)}`);

// runTools streamed: tool-call deltas assembled by the SDK.
const sran = [];
const srunner = client.beta.chat.completions.runTools({
  model: "honest", seed: 4, stream: true, stream_options: { include_usage: true },
  messages: [{ role: "user", content: "Weather in Bergen?" }],
  tools: [zodFunction({ name: "get_weather", parameters: Weather, function: (args) => { sran.push(args); return "rain"; } })],
});
const sfinal = await srunner.finalContent();
assert(sran.length === 1 && sfinal, "streamed runTools: " + JSON.stringify({ sran, sfinal }));
console.log(`runTools streamed: get_weather(${JSON.stringify(sran[0])}); final: ${sfinal.slice(0, 60)}`);

// parse(): a zod response_format, then a plain json_schema one; zod tools
// with tool_choice named come back with parsed_arguments.
const Review = z.object({ verdict: z.enum(["approve", "reject"]), reasons: z.array(z.string()).min(1), score: z.number().min(0).max(10), reviewer: z.object({ name: z.string(), email: z.string().email() }) });
const parsed = await client.beta.chat.completions.parse({ model: "honest", seed: 7,
  messages: [{ role: "user", content: "Review the rate limiter design." }], response_format: zodResponseFormat(Review, "review") });
const review = parsed.choices[0].message.parsed;
assert(review && Review.safeParse(review).success, "parse(zod): " + JSON.stringify(parsed.choices[0].message));
console.log("parse zod:", JSON.stringify(review).slice(0, 160));
const parsedJS = await client.beta.chat.completions.parse({ model: "honest", seed: 7, messages: [{ role: "user", content: "Review it." }],
  response_format: { type: "json_schema", json_schema: { name: "verdicts", strict: true, schema } } });
assert(Array.isArray(parsedJS.choices[0].message.parsed?.verdicts), "parse(json_schema): " + JSON.stringify(parsedJS.choices[0].message));
console.log("parse json_schema:", JSON.stringify(parsedJS.choices[0].message.parsed).slice(0, 120));
const Lookup = z.object({ order_id: z.string().regex(/^ord_[0-9]{4}$/), include: z.array(z.enum(["items", "shipping"])) });
const parsedTool = await client.beta.chat.completions.parse({ model: "honest", messages: [{ role: "user", content: "Where is my order?" }],
  tools: [zodFunction({ name: "lookup_order", parameters: Lookup }), zodFunction({ name: "get_weather", parameters: Weather })],
  tool_choice: { type: "function", function: { name: "lookup_order" } } });
const ptc = parsedTool.choices[0].message.tool_calls ?? [];
assert(ptc.length === 1 && ptc[0].function.name === "lookup_order" && Lookup.safeParse(ptc[0].function.parsed_arguments).success,
  "parse with a named zod tool: " + JSON.stringify(parsedTool.choices[0].message));
console.log("parse tool:", ptc[0].function.name, JSON.stringify(ptc[0].function.parsed_arguments));

// The streaming helper with usage.
const helper = client.beta.chat.completions.stream({ model: "noisy", stream_options: { include_usage: true }, messages: [{ role: "user", content: "Summarise the incident." }] });
let deltas = 0; helper.on("content", () => deltas++);
const streamed = await helper.finalChatCompletion();
assert(deltas > 0 && streamed.choices[0].message.content && streamed.usage?.total_tokens > 0, "stream helper: " + JSON.stringify(streamed));
console.log("stream helper: usage", JSON.stringify(streamed.usage));

// tool_choice: required (after the results are in, auto would answer), a
// named function, none; parallel_tool_calls false.
const plainTools = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
  { type: "function", function: { name: "get_time", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
];
const answered = [{ role: "user", content: "Weather in Oslo?" },
  { role: "assistant", content: null, tool_calls: [{ id: "call_0_0", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
  { role: "tool", tool_call_id: "call_0_0", content: "3C" }];
const ask = (extra, messages = answered) => client.chat.completions.create({ model: "honest", messages, tools: plainTools, ...extra });
const auto = await ask({});
assert(!auto.choices[0].message.tool_calls && auto.choices[0].finish_reason === "stop", "auto after the results should answer: " + JSON.stringify(auto.choices[0]));
const required = await ask({ tool_choice: "required" });
assert(required.choices[0].message.tool_calls?.length >= 1 && required.choices[0].finish_reason === "tool_calls", "tool_choice required: " + JSON.stringify(required.choices[0]));
const named = await ask({ tool_choice: { type: "function", function: { name: "get_time" } } });
assert(named.choices[0].message.tool_calls?.map(c => c.function.name).join() === "get_time", "tool_choice named: " + JSON.stringify(named.choices[0]));
const none = await ask({ tool_choice: "none" }, answered.slice(0, 1));
assert(!none.choices[0].message.tool_calls && none.choices[0].message.content, "tool_choice none: " + JSON.stringify(none.choices[0]));
const single = await ask({ tool_choice: "required", parallel_tool_calls: false });
assert(single.choices[0].message.tool_calls?.length === 1, "parallel_tool_calls false: " + JSON.stringify(single.choices[0]));
console.log(`tool_choice: required -> ${required.choices[0].message.tool_calls.map(c => c.function.name)}, named -> get_time, none -> text, parallel false -> 1 call`);
try {
  await ask({ tool_choice: { type: "function", function: { name: "nope" } } });
  throw new Error("a named tool not offered was accepted");
} catch (e) {
  assert(e instanceof OpenAI.BadRequestError && e.param === "tool_choice", "named tool not offered: " + e);
}

// n = 2: two choices, indexed.
const two = await client.chat.completions.create({ model: "honest", n: 2, seed: 1, messages: [{ role: "user", content: "Rate the plan." }],
  response_format: { type: "json_schema", json_schema: { name: "rating", schema: { type: "object", properties: { score: { type: "integer", minimum: 0, maximum: 1000 } }, required: ["score"] } } } });
assert(two.choices.length === 2 && two.choices.every((c, i) => c.index === i), "n=2: " + JSON.stringify(two.choices));
console.log("n=2:", two.choices.map(c => c.message.content).join(" | "));

// GET /v1/models/{id}, and the errors the official API gives.
const model = await client.models.retrieve("honest");
assert(model.id === "honest" && model.object === "model", "models.retrieve: " + JSON.stringify(model));
for (const [what, call, Err] of [
  ["an unknown model", () => client.models.retrieve("gpt-4o"), OpenAI.NotFoundError],
  ["an unknown role", () => client.chat.completions.create({ model: "honest", messages: [{ role: "robot", content: "x" }] }), OpenAI.BadRequestError],
  ["n out of range", () => client.chat.completions.create({ model: "honest", n: 0, messages: [{ role: "user", content: "x" }] }), OpenAI.BadRequestError],
]) {
  try { await call(); throw new Error(what + " was accepted"); } catch (e) { assert(e instanceof Err, `${what}: ${e}`); }
}
console.log("models.retrieve honest ok; gpt-4o 404, unknown role 400, n=0 400");
console.log("sdk-check-node: all checks passed");
