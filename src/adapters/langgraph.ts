/**
 * loopguard/langgraph: the guard in LangGraph.js graphs. `GuardedToolNode` is a `ToolNode` whose
 * calls go through the guard (a call it does not run gets a `ToolMessage` of status `error`).
 * `guardPostModelHook` and `guardRoute` end the graph once the guard has ended the run, so it
 * does not run on into `GraphRecursionError`. A tool's `interrupt()` still pauses the graph
 * (see `guardedToolMessage`).
 */
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { END } from '@langchain/langgraph';
import { ToolNode, type ToolNodeOptions } from '@langchain/langgraph/prebuilt';
import { isTerminal } from '../domain/index.js';
import { combinedSignal, type GuardToolsOptions, type Run } from '../runtime/index.js';
import { stopNote } from './end-after-stop.js';
import { GuardedCalls } from './guarded-calls.js';
import { guardedToolMessage } from './tool-message.js';

type Tools = ConstructorParameters<typeof ToolNode>[0];
type ToolCall = Parameters<ToolNode['runTool']>[0];
type Config = Parameters<ToolNode['runTool']>[1];

/**
 * A `ToolNode` whose calls go through the run's guard, in a graph of any shape. The tool's
 * signal fires on the graph's abort and on the guard's step timeout, whichever comes first.
 */
export class GuardedToolNode extends ToolNode {
  private readonly calls: GuardedCalls;

  constructor(run: Run, tools: Tools, opts: GuardToolsOptions & { readonly node?: ToolNodeOptions } = {}) {
    super(tools, opts.node);
    this.calls = new GuardedCalls(run, opts);
  }

  protected override runTool(
    call: ToolCall,
    config: Config,
    state: unknown,
  ): ReturnType<ToolNode['runTool']> {
    return guardedToolMessage(this.calls, call, (signal) =>
      super.runTool(call, { ...config, signal: combinedSignal(signal, config.signal) }, state),
    );
  }
}

/**
 * For `createReactAgent({ postModelHook })`: once the guard has ended the run, the model's turn
 * after the stop (which had the stop message before it) is its last. The tool calls it asks for
 * then would be refused, so they are dropped from its message (replaced by id) and the agent ends
 * with that message; without tool calls, nothing changes.
 */
export function guardPostModelHook(run: Run) {
  return (state: { messages: BaseMessage[] }): { messages?: BaseMessage[] } => {
    const last = state.messages.at(-1);
    if (!isTerminal(run.state.status) || last === undefined || !AIMessage.isInstance(last)) return {};
    if ((last.tool_calls?.length ?? 0) === 0) return {};
    const text =
      typeof last.content === 'string' && last.content !== '' ? last.content : stopNote(run.state.report);
    return {
      messages: [
        new AIMessage({ ...(last.id === undefined ? {} : { id: last.id }), content: text, tool_calls: [] }),
      ],
    };
  };
}

/**
 * For the conditional edge after the model node of a hand-built graph: `END` once the guard has
 * ended the run (the model has just had its turn, with the stop message before it), else what
 * `route` says.
 */
export function guardRoute<S, R extends string>(
  run: Run,
  route: (state: S) => R,
): (state: S) => R | typeof END {
  return (state) => (isTerminal(run.state.status) ? END : route(state));
}
