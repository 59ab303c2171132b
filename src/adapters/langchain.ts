/**
 * loopguard/langchain: the guard as `createAgent` middleware. Every tool call goes through the
 * guard (a call it does not run gets a `ToolMessage` of status `error`), and the agent ends once
 * the guard has ended the run and the model has had its turn. A human-in-the-loop middleware
 * before it keeps its interrupts: the guard judges a call only when the tool runs. A retry
 * middleware goes before it too: inside it, a retry would run the tool again under one decision.
 */
import { createMiddleware } from 'langchain';
import type { GuardToolsOptions, Run } from '../runtime/index.js';
import { endAfterStop } from './end-after-stop.js';
import { GuardedCalls } from './guarded-calls.js';
import { guardedToolMessage, invokedOnce } from './tool-message.js';

export function loopguardMiddleware(run: Run, opts: GuardToolsOptions = {}) {
  const calls = new GuardedCalls(run, opts);
  const end = endAfterStop(run);
  return createMiddleware({
    name: 'loopguard',
    beforeModel: {
      canJumpTo: ['end'],
      hook: () => (end() ? { jumpTo: 'end' } : undefined),
    },
    wrapToolCall: (request, handler) =>
      guardedToolMessage(calls, request.toolCall, (signal) => {
        const once = invokedOnce(request.tool, signal);
        return once.answer(Promise.resolve(handler({ ...request, tool: once.tool })));
      }),
  });
}
