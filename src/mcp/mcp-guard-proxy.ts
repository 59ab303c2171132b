import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { canonicalCall, isTerminal, LoopguardError, own, type RunState } from '../domain/index.js';
import type { CallResult, Guard, GuardedRun } from '../runtime/index.js';
import { guardErrorResult, toMcpToolResult } from './mcp-tool-result.js';
import { isSideEffectTool } from './tool-side-effect.js';
import { callUpstream, type UpstreamAnswer } from './upstream-call.js';

export interface UpstreamServer {
  readonly command: string;
  readonly args?: readonly string[];
  /** The upstream's environment; default: this process's whole environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export interface McpGuardProxyOptions {
  readonly guard: Guard;
  /** The run this MCP session is: one session, one run. */
  readonly runId: string;
  readonly upstream: UpstreamServer;
  readonly taskType?: string;
  /** Tools whose side effect the policy states (see declaredSideEffects); the rest go by annotations. */
  readonly declaredSideEffects?: Readonly<Record<string, boolean>>;
}

const inheritedEnv = (): Record<string, string> =>
  Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));

/**
 * An MCP server in front of another one: tools are listed as the upstream lists them, and every
 * tools/call goes through one guarded run. A side-effecting call's operation key is the tool and
 * its canonical arguments within the run, so the same payment asked twice runs once.
 */
export class McpGuardProxy {
  private readonly tools = new Map<string, Tool>();
  private ending: Promise<RunState> | undefined;
  private readonly ended: Promise<RunState>;
  private settle: { resolve(s: RunState): void; reject(e: unknown): void } | undefined;

  private constructor(
    private readonly opts: McpGuardProxyOptions,
    private readonly upstream: Client,
    private readonly server: Server,
    private readonly run: GuardedRun,
  ) {
    this.ended = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Seen by whoever awaits `closed`; not an unhandled rejection when nobody does.
    this.ended.catch(() => undefined);
  }

  /** Starts the upstream, opens the run, and serves MCP on `transport` (stdio in the CLI). */
  static async start(opts: McpGuardProxyOptions, transport: Transport): Promise<McpGuardProxy> {
    const upstream = new Client({ name: 'loopguard', version: '1' });
    try {
      await upstream.connect(
        new StdioClientTransport({
          command: opts.upstream.command,
          args: [...(opts.upstream.args ?? [])],
          env: { ...(opts.upstream.env ?? inheritedEnv()) },
          ...(opts.upstream.cwd !== undefined ? { cwd: opts.upstream.cwd } : {}),
        }),
      );
    } catch (e) {
      await upstream.close().catch(() => undefined);
      throw new LoopguardError(
        'upstream_unavailable',
        `upstream MCP server ${opts.upstream.command}: could not start it or initialize a session (${(e as Error).message})`,
        { cause: e },
      );
    }
    let run: GuardedRun;
    try {
      run = await opts.guard.startRun({
        runId: opts.runId,
        ...(opts.taskType !== undefined ? { taskType: opts.taskType } : {}),
        meta: { mcp_upstream: [opts.upstream.command, ...(opts.upstream.args ?? [])].join(' ') },
      });
    } catch (e) {
      await upstream.close();
      throw e;
    }
    const info = upstream.getServerVersion();
    const instructions = upstream.getInstructions();
    const server = new Server(
      { name: `loopguard(${info?.name ?? opts.upstream.command})`, version: info?.version ?? '0' },
      { capabilities: { tools: { listChanged: true } }, ...(instructions ? { instructions } : {}) },
    );
    const proxy = new McpGuardProxy(opts, upstream, server, run);
    proxy.serve();
    await server.connect(transport);
    return proxy;
  }

  private serve(): void {
    this.server.setRequestHandler(ListToolsRequestSchema, async (req) => {
      const page = await this.upstream.listTools(req.params);
      for (const t of page.tools) this.tools.set(t.name, t);
      return page;
    });
    this.server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const { name, arguments: args = {} } = req.params;
      const sideEffect = await this.sideEffect(name);
      const key = sideEffect ? this.operationKey(name, args) : undefined;
      let answer: UpstreamAnswer | undefined;
      let r: CallResult;
      try {
        r = await this.run.call(
          { tool: name, args, sideEffect, ...(key !== undefined ? { operationKey: key } : {}) },
          // The client may cancel its request: the upstream call is cancelled with it (a side
          // effect in it is then in doubt, as after a timeout).
          (signal) =>
            callUpstream(
              this.upstream,
              name,
              args,
              AbortSignal.any([signal, extra.signal]),
              this.run.state.policy?.stepTimeoutMs ?? null,
              (a) => {
                answer = a;
              },
            ),
        );
      } catch (e) {
        if (e instanceof LoopguardError) return guardErrorResult(e);
        throw e;
      }
      return toMcpToolResult(r, answer);
    });
    this.upstream.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      this.tools.clear();
      await this.server.sendToolListChanged();
    });
    this.upstream.onclose = () => void this.close('the upstream MCP server exited').catch(() => undefined);
    this.server.onclose = () => void this.close('the MCP client closed the session').catch(() => undefined);
  }

  /**
   * Whether a call of `name` may change the world: the policy's word, else the annotations as last
   * listed (listed afresh for a tool the client called unlisted). A tool the upstream does not list
   * cannot run there, so nothing needs deduplicating; one the upstream could not list is taken as a
   * side effect, the safe reading.
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
    const tool = this.tools.get(name);
    return tool !== undefined && isSideEffectTool(tool);
  }

  private operationKey(tool: string, args: Record<string, unknown>): string | undefined {
    const volatile = this.run.state.policy?.tools[tool]?.volatileArgs ?? [];
    // The guard's own hashing: secret values in the key are hashed with the guard's key, as in its log.
    const canon = canonicalCall(tool, args, this.opts.guard.hashing, volatile);
    return canon.ok ? `mcp:${this.opts.runId}:${tool}:${canon.value.fingerprint}` : undefined;
  }

  get runId(): string {
    return this.opts.runId;
  }

  /** Resolves with the run's final state once the session is over; rejects if ending it failed. */
  get closed(): Promise<RunState> {
    return this.ended;
  }

  /**
   * Ends the session: the upstream is stopped first (a call still in flight then fails, and a side
   * effect in it is in doubt, never assumed), then the run ends PARTIAL with the reason unless a
   * rule already ended it, then the log is closed. Idempotent.
   */
  close(reason: string): Promise<RunState> {
    if (this.ending === undefined) {
      this.ending = this.shutdown(reason);
      this.ending.then(this.settle?.resolve, this.settle?.reject);
    }
    return this.ending;
  }

  private async shutdown(reason: string): Promise<RunState> {
    try {
      await this.upstream.close().catch(() => undefined);
      if (!isTerminal(this.run.state.status)) await this.run.cancel(reason);
      return this.run.state;
    } finally {
      await this.opts.guard.close();
      await this.server.close().catch(() => undefined);
    }
  }
}
