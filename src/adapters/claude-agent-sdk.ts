/**
 * loopguard/claude-agent-sdk: the guard in the Claude Agent SDK's `query()`. `PreToolUse` decides
 * before a built-in tool runs (a refusal is the SDK's own deny), `PostToolUse` and
 * `PostToolUseFailure` record what it did. `mcpServer` wraps an in-process MCP server's tools,
 * which the guard runs itself (a side effect already done is answered from the ledger). Once the
 * guard has ended the run, the model gets one more turn; a tool it asks for then is denied with
 * `continue: false`, which ends the query.
 *
 * The guard only adds denials: no hook answers `allow`, `ask` or a permission request, so the
 * SDK's permissions decide as without loopguard. Nothing is imported from the SDK (its package
 * carries a ~400 MB binary): its shapes are spelled out below, and a test checks them against it.
 */
import { once } from 'node:events';
import { isTerminal } from '../domain/index.js';
import { type GuardToolsOptions, type Run, ToolError, toModelMessage } from '../runtime/index.js';
import { type ClaudeMcpTool, guardedMcpServer } from './claude-mcp-server.js';
import { errorText, noteOf, type ToolReply, toolFailed } from './claude-tool-result.js';
import { stopNote } from './end-after-stop.js';
import { GuardedCalls } from './guarded-calls.js';

export type { ClaudeMcpTool } from './claude-mcp-server.js';

/** What a hook of the SDK gets: every event's input names its event; the rest is read per event. */
export interface ClaudeHookInput {
  readonly hook_event_name: string;
}

/** What the guard's hooks answer: a denial before a tool, a note after one, the end of the query. */
export interface ClaudeHookOutput {
  readonly continue?: boolean;
  readonly stopReason?: string;
  readonly hookSpecificOutput?:
    | {
        readonly hookEventName: 'PreToolUse';
        readonly permissionDecision: 'deny';
        readonly permissionDecisionReason: string;
      }
    | {
        readonly hookEventName: 'PostToolUse' | 'PostToolUseFailure';
        readonly additionalContext: string;
      };
}

/** The SDK's `HookCallback`. */
export type ClaudeHook = (
  input: ClaudeHookInput,
  toolUseId: string | undefined,
  options: { signal: AbortSignal },
) => Promise<ClaudeHookOutput>;

/** The SDK's `HookCallbackMatcher`, as the guard registers it. */
export interface ClaudeHookMatcher {
  hooks: ClaudeHook[];
  /** A guard that fails (its log unavailable) blocks the tool rather than letting it run unjudged. */
  onFailure?: 'block';
}

type GuardEvent =
  | 'PreToolUse'
  | 'PostToolUse'
  | 'PostToolUseFailure'
  | 'PermissionRequest'
  | 'PermissionDenied'
  | 'PostToolBatch'
  | 'Stop'
  | 'SubagentStop';

export interface ClaudeAgentGuard {
  /**
   * For `query({ options: { hooks } })`. To add hooks of your own, put them beside these in the
   * same event's list: `{ ...guard.hooks, Stop: [...guard.hooks.Stop, mine] }`.
   */
  readonly hooks: Record<GuardEvent, ClaudeHookMatcher[]>;
  /**
   * `createSdkMcpServer(guard.mcpServer({ name: 'shop', tools: [charge] }))`: every tool run by
   * the guard, which (like `operationKey`) knows it as the model does, `mcp__<server>__<tool>`.
   */
  mcpServer<S extends { readonly name: string; readonly tools?: readonly ClaudeMcpTool[] }>(server: S): S;
}

/** The fields of a tool event's input the guard reads (the SDK's PreToolUse/PostToolUse... inputs). */
interface ToolEvent {
  readonly tool_name?: string;
  readonly tool_input?: unknown;
  readonly tool_use_id?: string;
  readonly tool_response?: unknown;
  readonly error?: string;
  readonly is_interrupt?: boolean;
  readonly tool_calls?: readonly { readonly tool_use_id?: string }[];
  /** Set when the event comes from a sub-agent's loop; absent on the main thread. */
  readonly agent_id?: string;
}

/** A built-in tool's response as the guard records it: an interrupted or failed response is no success. */
function recorded(response: unknown): unknown {
  const r = response as { interrupted?: unknown; isError?: unknown } | null;
  if (r?.interrupted === true) throw new ToolError('RETRYABLE', 'interrupted', 'the tool was interrupted');
  if (r?.isError === true) throw toolFailed(errorText(r as ToolReply));
  return response;
}

/**
 * Tools that start a sub-agent. Their calls are not held: the sub-agent's own tool calls come
 * through the same hooks, and each would wait for the held launch until the step timeout.
 */
const SUBAGENT_TOOLS: ReadonlySet<string> = new Set(['Agent', 'Task']);

/**
 * Tools the SDK never runs beside another tool of the same agent (not concurrency-safe: it runs
 * concurrency-safe tool uses in parallel, up to 10, and each other one alone). The next PreToolUse
 * of that agent therefore comes after such a call's permission flow, tool and PostToolUse: if no
 * PostToolUse came, the SDK did not run it.
 */
const RUN_ALONE: ReadonlySet<string> = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);

/** A call the guard allowed (and holds the run's turn for) whose result no hook has recorded yet. */
interface Allowed {
  readonly tool: string;
  readonly input: unknown;
  /** The sub-agent whose loop made the call; undefined on the main thread. */
  readonly agent: string | undefined;
  /** The SDK asked its permission flow about it (after the guard's PreToolUse). */
  asked: boolean;
}

export function claudeAgentGuard(run: Run, opts: GuardToolsOptions = {}): ClaudeAgentGuard {
  const calls = new GuardedCalls(run, opts);
  const allowed = new Map<string, Allowed>();
  /** Calls recorded as not run on the SDK's word; a PostToolUse that still comes is not decided anew. */
  const notRun = new Set<string>();
  /** Tools whose handler the guard runs: their hooks only decide; the handler records. */
  const inProcess = new Set<string>();
  /** The model has had its turn after the stop: a tool it asks for now ends the query. */
  let endNext = false;
  /** A PreToolUse is deciding: the next one waits outside the run's queue (see turn). */
  let deciding = false;
  /** Resolved, and replaced, whenever what `turn` waits on changes. */
  let wake: () => void = () => undefined;
  let changed = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const changes = () => {
    wake();
    changed = new Promise<void>((resolve) => {
      wake = resolve;
    });
  };

  const deny = (reason: string, end: boolean): ClaudeHookOutput => ({
    ...(end ? { continue: false, stopReason: stopNote(run.state.report) } : {}),
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: reason,
    },
  });

  /**
   * A call the guard allowed that the SDK did not run, on the SDK's own evidence (PermissionDenied,
   * its batch or its agent's turn ended without its PostToolUse): recorded as a call that did not
   * happen for want of a precondition, so its key and the run's turn are free again. Never on
   * another call's PreToolUse alone: the SDK runs calls in parallel, so that call may be running.
   */
  const settleNotRun = async (id: string): Promise<void> => {
    const a = allowed.get(id);
    if (a === undefined) return;
    allowed.delete(id);
    notRun.add(id);
    await calls.execute(id, a.tool, a.input, () => {
      throw new ToolError('PRECONDITION', 'not_run', 'the SDK did not run the tool (permission denied)');
    });
    changes();
  };

  /**
   * Waits until a call of `agent` may be decided, and takes the turn to decide it (null); or says
   * why it may not be decided now. Deciding while the guard holds an allowed call would queue
   * behind that call's result inside the run, where it cannot be taken back; so it waits here,
   * looking again whenever a held call settles or changes. Waiting is safe for a held call whose
   * result does not depend on this hook returning: one of another sub-agent, or one not asked
   * about (allowed, it runs and its PostToolUse comes). One that may be of this call's batch (held
   * for this agent, or for the main thread, which may have launched this sub-agent in that batch)
   * and is in the SDK's permission flow may be denied there, and only the batch's end would say
   * so, which waits for this hook: this call is denied instead, to be asked for again.
   */
  const turn = async (agent: string | undefined, signal: AbortSignal): Promise<string | null> => {
    for (;;) {
      let settled = false;
      for (const [id, a] of allowed) {
        if (a.agent !== undefined && a.agent !== agent) continue;
        if (a.agent === agent && RUN_ALONE.has(a.tool)) {
          await settleNotRun(id);
          settled = true;
          break;
        }
        if (a.asked)
          return `[loopguard] not decided: ${a.tool} call ${id} waits for the SDK's permission, and this call is decided only after it; ask for this call again once it has its answer.`;
      }
      if (settled) continue;
      if (!deciding && !calls.holding) {
        deciding = true;
        return null;
      }
      if (signal.aborted)
        return '[loopguard] not decided: the hook was cancelled while another call held the run';
      // A decision under way ends with changes(); a held call settles with free().
      await Promise.race([changed, deciding ? changed : calls.free(), once(signal, 'abort')]);
    }
  };

  /** Records what the SDK's tool did, under the decision PreToolUse took for it. */
  const record = async (
    hookEventName: 'PostToolUse' | 'PostToolUseFailure',
    e: ToolEvent,
    fn: () => unknown,
  ): Promise<ClaudeHookOutput> => {
    const id = e.tool_use_id;
    const name = e.tool_name;
    if (id === undefined || name === undefined || inProcess.has(name)) return {};
    // Recorded as not run on the SDK's word, yet it ran: deciding it now could refuse what already
    // ran, or record a run under a fresh claim of its key. Left as recorded.
    if (notRun.delete(id) || !allowed.has(id)) return {};
    allowed.delete(id);
    try {
      const note = noteOf(await calls.execute(id, name, e.tool_input, fn));
      return note === null ? {} : { hookSpecificOutput: { hookEventName, additionalContext: note } };
    } finally {
      changes();
    }
  };

  const preToolUse: ClaudeHook = async (input, toolUseId, { signal }) => {
    const e = input as ToolEvent;
    const id = e.tool_use_id ?? toolUseId;
    const name = e.tool_name;
    if (id === undefined || name === undefined) return {};
    if (SUBAGENT_TOOLS.has(name) && !isTerminal(run.state.status)) return {};
    // Asked again before its result (the SDK runs the hook twice): already allowed.
    if (allowed.has(id)) return {};
    const wait = await turn(e.agent_id, signal);
    if (wait !== null) return deny(wait, false);
    let r: Awaited<ReturnType<typeof calls.decide>>;
    try {
      r = await calls.decide(id, name, e.tool_input);
      if (r === null) allowed.set(id, { tool: name, input: e.tool_input, agent: e.agent_id, asked: false });
    } finally {
      deciding = false;
      changes();
    }
    if (r === null) return {};
    // An in-process tool's handler answers with the recorded result; a built-in cannot be answered.
    if (r.status === 'cached' && inProcess.has(name)) return {};
    return deny(toModelMessage(r), endNext && isTerminal(run.state.status));
  };

  /** A hook on a tool event; the tool use id is the callback's own where the input lacks it (PermissionRequest). */
  const on = (work: (e: ToolEvent) => Promise<ClaudeHookOutput | undefined>): ClaudeHookMatcher[] => [
    {
      hooks: [
        async (input, toolUseId) => {
          const e = input as ToolEvent;
          return (await work(e.tool_use_id === undefined ? { ...e, tool_use_id: toolUseId } : e)) ?? {};
        },
      ],
    },
  ];

  return {
    hooks: {
      PreToolUse: [{ hooks: [preToolUse], onFailure: 'block' }],
      PostToolUse: on((e) => record('PostToolUse', e, () => recorded(e.tool_response))),
      PostToolUseFailure: on((e) =>
        record('PostToolUseFailure', e, () => {
          // Interrupted: whether a side effect happened is unknown, so no class is claimed.
          if (e.is_interrupt === true)
            throw Object.assign(new Error(e.error ?? 'interrupted'), { name: 'interrupted' });
          throw toolFailed(e.error ?? 'tool error');
        }),
      ),
      PermissionRequest: on(async (e) => {
        const a = e.tool_use_id === undefined ? undefined : allowed.get(e.tool_use_id);
        if (a !== undefined) a.asked = true;
        changes(); // a call waiting in turn() for this one may have to be denied now
        return undefined; // the SDK's own permission flow answers
      }),
      PermissionDenied: on(async (e) => void (e.tool_use_id && (await settleNotRun(e.tool_use_id)))),
      PostToolBatch: on(async (e) => {
        for (const c of e.tool_calls ?? []) if (c.tool_use_id) await settleNotRun(c.tool_use_id);
        // The model's next turn has the stop before it; a tool it asks for then ends the query.
        if (isTerminal(run.state.status)) endNext = true;
        return undefined;
      }),
      // A turn's end: the main thread's (Stop) or a sub-agent's; a call of it still without result
      // was not run (a batch the SDK cut short may have had no PostToolBatch).
      Stop: on(async () => {
        for (const [id, a] of allowed) if (a.agent === undefined) await settleNotRun(id);
        return undefined;
      }),
      SubagentStop: on(async (e) => {
        for (const [id, a] of allowed)
          if (e.agent_id !== undefined && a.agent === e.agent_id) await settleNotRun(id);
        return undefined;
      }),
    },
    mcpServer: (server) =>
      guardedMcpServer(server, calls, {
        inProcess: (name) => inProcess.add(name),
        running: (id) => {
          allowed.delete(id);
          changes();
        },
      }),
  };
}
