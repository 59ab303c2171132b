import { MockLanguageModelV4 } from 'ai/test';

/** One tool call of a step: the tool, its input and, when the test names it, its call id. */
export type ScriptedCall = readonly [tool: string, input: object, id?: string];

/**
 * A mock AI SDK model: step n asks for the calls of script[n-1] (ids `call-<n>-<i>` unless given),
 * a step without calls answers in text. `prompts` holds each step's prompt as JSON.
 */
export function scripted(script: readonly (readonly ScriptedCall[])[]): {
  model: MockLanguageModelV4;
  prompts: string[];
} {
  const prompts: string[] = [];
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  };
  const model = new MockLanguageModelV4({
    doGenerate: (async (options: { prompt: unknown }) => {
      prompts.push(JSON.stringify(options.prompt));
      const n = prompts.length;
      const calls = script[n - 1] ?? [];
      return {
        content:
          calls.length === 0
            ? [{ type: 'text', text: 'done' }]
            : calls.map(([toolName, input, id], i) => ({
                type: 'tool-call',
                toolCallId: id ?? `call-${n}-${i}`,
                toolName,
                input: JSON.stringify(input),
              })),
        finishReason:
          calls.length === 0
            ? { unified: 'stop', raw: 'stop' }
            : { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    }) as never,
  });
  return { model, prompts };
}
