// The official openai npm package against our endpoint: one streamed answer, one whole answer,
// and one refusal. Prints what it saw as JSON for the Python test to check.
import OpenAI from "openai";

const { BASE_URL, API_KEY, MODEL, QUESTION } = process.env;
const client = new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY, maxRetries: 0, timeout: 120_000 });
const messages = [{ role: "user", content: QUESTION }];

const seen = { reasoning: "", content: "", sources: null, usage: null };
const stream = await client.chat.completions.create({
  model: MODEL,
  messages,
  stream: true,
  stream_options: { include_usage: true },
});
for await (const chunk of stream) {
  if (chunk.usage) seen.usage = chunk.usage;
  for (const choice of chunk.choices) {
    seen.reasoning += choice.delta.reasoning_content || "";
    seen.content += choice.delta.content || "";
    if (choice.finish_reason === "stop") seen.sources = chunk.sources;
  }
}

const whole = await client.chat.completions.create({ model: MODEL, messages });
seen.whole = whole.choices[0].message.content;
seen.wholeUsage = whole.usage;

const stranger = new OpenAI({ baseURL: BASE_URL, apiKey: "application-" + "0".repeat(32), maxRetries: 0 });
try {
  await stranger.chat.completions.create({ model: MODEL, messages });
  seen.refusal = "none";
} catch (error) {
  seen.refusal = { name: error.constructor.name, status: error.status, isAuth: error instanceof OpenAI.AuthenticationError };
}
console.log(JSON.stringify(seen));
