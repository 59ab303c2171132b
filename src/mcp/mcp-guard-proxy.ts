import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  ConflictError,
  canonicalCall,
  isTerminal,
  LoopguardError,
  own,
  type RunState,
  redactText,
  UnavailableError,
} from '../domain/index.js';
import type { CallResult, Guard, GuardedRun } from '../runtime/index.js';
import { guardErrorResult, toMcpToolResult } from './mcp-tool-result.js';
import { passThrough, proxiedCapabilities } from './pass-through.js';
import { SideEffectKeys } from './side-effect-keys.js';
import { isSideEffectTool } from './tool-side-effect.js';
import { callUpstream, type UpstreamAnswer } from './upstream-call.js';
import { shownCommand } from './upstream-command.js';
import { type RequestExtra, UpstreamProgress, withMeta } from './upstream-progress.js';

export interface UpstreamServer {
  readonly command: string;
  readonly args?: readonly string[];
  /**
   * Added to the MCP SDK's minimal default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER);
   * this process's own environment is never passed whole (see upstreamEnv).
   */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export interface McpGuardProxyOptions {
  readonly guard: Guard;
  /** The session's first run; after a stop the session goes on in `<runId>-2`, `<runId>-3`, ... */
  readonly runId: string;
  readonly upstream: UpstreamServer;
  readonly taskType?: string;
  /** Tools whose side effect the policy states (see declaredSideEffects); the rest go by annotations. */
  readonly declaredSideEffects?: Readonly<Record<string, boolean>>;
  /** Told of each run after the first one, with the run that ended before it. */
  readonly onNextRun?: (runId: string, ended: RunState) => void;
}

/**
 * An MCP server in front of another one. Everything but tool calls passes through (resources,
 * prompts, completions, logging, notifications); every tools/call goes through the session's
 * current guarded run, one at a time. A stop ends the task, not the server: the call that stops a
 * run answers with the stop, once, and the next call starts the session's next run.
 */
export class McpGuardProxy {
  private readonly tools = new Map<string, Tool>();
  private readonly keys: SideEffectKeys;
  private ending: Promise<RunState> | undefined;
  private readonly ended: Promise<RunState>;
  private settle: { resolve(s: RunState): void; reject(e: unknown): void } | undefined;
  /** Tool calls go one at a time (as the run's do), so a call cancelled while waiting never starts. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Why no more calls are taken: the session is ending. */
  private gone: { code: string; message: string } | null = null;
  private runs = 1;

  private constructor(
    private readonly opts: McpGuardProxyOptions,
    private readonly upstream: Client,
    private readonly progress: UpstreamProgress,
    private readonly server: Server,
    private run: GuardedRun,
    /** The upstream command line, redacted, as recorded and printed. */
    readonly upstreamCommand: string,
  ) {
    this.keys = new SideEffectKeys(opts.runId);
    this.ended = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Seen by whoever awaits `closed`; not an unhandled rejection when nobody does.
    this.ended.catch(() => undefined);
  }

  /** Starts the upstream, opens the run, and serves MCP on `transport` (stdio in the CLI). */
  static async start(opts: McpGuardProxyOptions, transport: Transport): Promise<McpGuardProxy> {
    const shown = shownCommand(opts.upstream.command, opts.upstream.args ?? [], opts.guard.hashing);
    const upstream = new Client({ name: 'loopguard', version: '1' });
    try {
      await upstream.connect(
        new StdioClientTransport({
          command: opts.upstream.command,
          args: [...(opts.upstream.args ?? [])],
          // The SDK adds its minimal default environment to this.
          env: { ...opts.upstream.env },
          ...(opts.upstream.cwd !== undefined ? { cwd: opts.upstream.cwd } : {}),
        }),
      );
    } catch (e) {
      await upstream.close().catch(() => undefined);
      throw new UnavailableError(
        'upstream_unavailable',
        `upstream MCP server ${redactText(opts.upstream.command, opts.guard.hashing)}: could not start it or initialize a session (${(e as Error).message})`,
        { cause: e },
      );
    }
    const run = await McpGuardProxy.startRun(opts, opts.runId, shown).catch(async (e: unknown) => {
      await upstream.close();
      throw e;
    });
    const info = upstream.getServerVersion();
    const instructions = upstream.getInstructions();
    const capabilities = proxiedCapabilities(upstream.getServerCapabilities());
    const server = new Server(
      { name: `loopguard(${info?.name ?? opts.upstream.command})`, version: info?.version ?? '0' },
      { capabilities, ...(instructions ? { instructions } : {}) },
    );
    const progress = new UpstreamProgress(upstream);
    const proxy = new McpGuardProxy(opts, upstream, progress, server, run, shown);
    passThrough(server, upstream, capabilities, progress);
    proxy.serve();
    await server.connect(transport);
    return proxy;
  }

  private static async startRun(opts: McpGuardProxyOptions, runId: string, shown: string) {
    try {
      return await opts.guard.startRun({
        runId,
        ...(opts.taskType !== undefined ? { taskType: opts.taskType } : {}),
        meta: { mcp_upstream: shown, mcp_session: opts.runId },
      });
    } catch (e) {
      if (e instanceof LoopguardError && e.code === 'run_exists')
        throw new ConflictError(
          'run_exists',
          `run ${runId} is already in the log: give another --run-id, or leave it out for a generated one`,
          { cause: e },
        );
      throw e;
    }
  }

  private serve(): void {
    this.server.setRequestHandler(ListToolsRequestSchema, async (req, extra) => {
      const page = await this.progress.forward(extra, (meta) =>
        this.upstream.listTools(withMeta(req.params ?? {}, meta), { signal: extra.signal }),
      );
      for (const t of page.tools) this.tools.set(t.name, t);
      return page;
    });
    this.server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
      const turn = this.queue.then(() => this.callTool(req.params, extra));
      this.queue = turn.catch(() => undefined);
      return turn;
    });
    this.upstream.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      this.tools.clear();
      await this.server.sendToolListChanged();
    });
    this.upstream.onclose = () =>
      void this.close('the upstream MCP server exited', 'upstream_exited').catch(() => undefined);
    this.server.onclose = () => void this.close('the MCP client closed the session').catch(() => undefined);
  }

  private async callTool(
    params: { name: string; arguments?: Record<string, unknown> | undefined },
    extra: RequestExtra,
  ): Promise<CallToolResult> {
    // The client cancelled it while it waited its turn: it never starts, and nothing is recorded.
    if (extra.signal.aborted) return notStarted('cancelled', 'the MCP client cancelled the call');
    if (this.gone !== null) return notStarted(this.gone.code, this.gone.message);
    const { name, arguments: args = {} } = params;
    const sideEffect = await this.sideEffect(name);
    if (extra.signal.aborted) return notStarted('cancelled', 'the MCP client cancelled the call');
    const run = await this.currentRun();
    const fp = sideEffect ? this.fingerprint(run, name, args) : null;
    const key = fp === null ? undefined : this.keys.keyFor(name, fp);
    let answer: UpstreamAnswer | undefined;
    let r: CallResult;
    try {
      r = await this.progress.forward(extra, (meta) =>
        run.call(
          { tool: name, args, sideEffect, ...(key !== undefined ? { operationKey: key } : {}) },
          (signal) =>
            callUpstream(this.upstream, name, args, {
              signal: AbortSignal.any([signal, extra.signal]),
              cancelled: extra.signal,
              timeoutMs: run.state.policy?.stepTimeoutMs ?? null,
              meta,
              onAnswer: (a) => {
                answer = a;
              },
            }),
        ),
      );
    } catch (e) {
      if (e instanceof LoopguardError) return guardErrorResult(e);
      throw e;
    }
    if (fp !== null && key !== undefined && r.status === 'executed')
      this.keys.settled(name, fp, key, this.inDoubt(run, key));
    return toMcpToolResult(r, answer);
  }

  /** The run this call belongs to: the current one, or the session's next once it has ended. */
  private async currentRun(): Promise<GuardedRun> {
    if (!isTerminal(this.run.state.status)) return this.run;
    const ended = this.run.state;
    const runId = `${this.opts.runId}-${++this.runs}`;
    this.run = await McpGuardProxy.startRun(this.opts, runId, this.upstreamCommand);
    this.opts.onNextRun?.(runId, ended);
    return this.run;
  }

  private inDoubt(run: GuardedRun, key: string): boolean {
    return own(run.state.operations, redactText(key, this.opts.guard.hashing))?.status === 'in_doubt';
  }

  /**
   * Whether a call of `name` may change the world: the policy's word, else the annotations as last
   * listed (listed afresh for a tool the client called unlisted). A tool the upstream does not list
   * (or could not list) is taken as a side effect, the safe reading: servers accept calls of tools
   * they no longer list (an old name kept for compatibility), and such a call changes the world as
   * any other.
   */
  private async sideEffect(name: string): Promise<boolean> {
    // own: an upstream tool named "constructor" is not Object's constructor.
    const declared = own(this.opts.declaredSideEffects ?? {}, name);
    if (declared !== undefined) return declared;
    if (!this.tools.has(name)) {
      let cursor: string | undefined;
      try {
        do {
          const page = await this.upstream.listTools(cursor === undefined ? {} : { cursor });
          for (const t of page.tools) this.tools.set(t.name, t);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
      } catch {
        return true;
      }
    }
    return isSideEffectTool(this.tools.get(name));
  }

  /** The call's fingerprint under the guard's own hashing (secret values hashed with its key, as in its log). */
  private fingerprint(run: GuardedRun, tool: string, args: Record<string, unknown>): string | null {
    const volatile = run.state.policy?.tools[tool]?.volatileArgs ?? [];
    const canon = canonicalCall(tool, args, this.opts.guard.hashing, volatile);
    return canon.ok ? canon.value.fingerprint : null;
  }

  /** The session's current run. */
  get runId(): string {
    return this.run.runId;
  }

  /** Resolves with the last run's final state once the session is over; rejects if ending it failed. */
  get closed(): Promise<RunState> {
    return this.ended;
  }

  /**
   * Ends the session: no call is taken any more, the upstream is stopped (a call still in flight
   * then fails, and a side effect in it is in doubt, never assumed), the calls under way finish,
   * then the run ends PARTIAL with the reason unless a rule already ended it, then the log is
   * closed. Idempotent.
   */
  close(reason: string, code = 'session_closed'): Promise<RunState> {
    if (this.ending === undefined) {
      this.gone = { code, message: reason };
      this.ending = this.shutdown(reason);
      this.ending.then(this.settle?.resolve, this.settle?.reject);
    }
    return this.ending;
  }

  /** Why the session ended, once it has: the upstream exited, the client closed it, or it was stopped. */
  get endedBy(): { code: string; message: string } | null {
    return this.gone;
  }

  private async shutdown(reason: string): Promise<RunState> {
    try {
      await this.upstream.close().catch(() => undefined);
      await this.queue;
      if (!isTerminal(this.run.state.status)) await this.run.cancel(reason);
      return this.run.state;
    } finally {
      await this.opts.guard.close();
      await this.server.close().catch(() => undefined);
    }
  }
}

/** A tool call that never reached the guard: the session cannot take it; nothing was recorded. */
const notStarted = (code: string, message: string): CallToolResult =>
  guardErrorResult({ code, message: `${message}; the call did not run` });
