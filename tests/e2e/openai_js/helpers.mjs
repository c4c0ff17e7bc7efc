// The official openai npm package's helpers against our endpoint: the chat stream helper's
// final completion (which merges each delta's other fields by overwriting them), one model
// retrieved and one unknown, a legacy text completion. Prints what it saw as JSON for the
// Python test to check.
import OpenAI from "openai";

const { BASE_URL, API_KEY, MODEL, QUESTION } = process.env;
const client = new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY, maxRetries: 0, timeout: 120_000 });
const seen = {};

const runner = client.chat.completions.stream({ model: MODEL, messages: [{ role: "user", content: QUESTION }] });
let streamed = "";
runner.on("chunk", (chunk) => {
  for (const choice of chunk.choices) streamed += choice.delta.reasoning_content || "";
});
const final = await runner.finalChatCompletion();
seen.final = { message: final.choices[0].message, sources: final.sources, chatId: final.chat_id };
seen.streamedReasoning = streamed;

const model = await client.models.retrieve(MODEL);
seen.model = { id: model.id, object: model.object, ownedBy: model.owned_by };
try {
  await client.models.retrieve("no-such-application");
  seen.unknownModel = "none";
} catch (error) {
  seen.unknownModel = { status: error.status, code: error.code, isNotFound: error instanceof OpenAI.NotFoundError };
}

const text = await client.completions.create({ model: MODEL, prompt: QUESTION });
seen.text = { object: text.object, text: text.choices[0].text, rounds: text.choices[0].rounds };
console.log(JSON.stringify(seen));
