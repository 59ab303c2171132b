import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { LoopguardError } from '../domain/index.js';
import { declaredSideEffects, McpGuardProxy } from '../mcp/index.js';
import { upstreamEnv } from '../mcp/upstream-command.js';
import type { Io } from './io.js';
import type { Env, KafkaFlags } from './kafka-config.js';
import { openGuard } from './open-guard.js';
import { loadMetricsServer } from './optional-package.js';
import { readPolicyFile } from './policy-file.js';

export interface McpFlags extends KafkaFlags {
  readonly policy?: string;
  readonly 'run-id'?: string;
  readonly 'metrics-port'?: number;
  readonly env?: readonly string[];
}

/**
 * `loopguard mcp [options] -- COMMAND [ARGS...]`: serves MCP on stdin/stdout in front of the
 * upstream server COMMAND, one guarded run for the session (a new one after each stop). stdout is
 * the protocol, so everything for people goes to stderr. Returns when the client closes the
 * session (stdin ends), the upstream exits (1), or `signal` fires.
 */
export async function mcpCommand(
  values: McpFlags,
  before: readonly string[],
  upstream: readonly string[] | null,
  io: Io,
  env: Env,
  signal: AbortSignal,
): Promise<number> {
  if (before.length > 0)
    throw new LoopguardError('usage', `mcp: unexpected ${before[0]}; the upstream command goes after --`);
  const [command, ...args] = upstream ?? [];
  if (command === undefined)
    throw new LoopguardError(
      'usage',
      'mcp: give the upstream MCP server after --, e.g. loopguard mcp -- npx -y @modelcontextprotocol/server-everything',
    );
  const { policy, json } = readPolicyFile(values.policy);
  const runId = values['run-id'] ?? `mcp-${randomUUID()}`;
  const metricsPort = values['metrics-port'];
  const served = metricsPort === undefined ? null : await loadMetricsServer();
  const metrics = served?.serviceMetrics();
  const { guard, where } = await openGuard(values, env, policy, metrics);
  let proxy: McpGuardProxy;
  try {
    proxy = await McpGuardProxy.start(
      {
        guard,
        runId,
        upstream: { command, args, env: upstreamEnv(values.env ?? [], env) },
        declaredSideEffects: declaredSideEffects(json),
        onNextRun: (next, ended) =>
          io.err(
            `loopguard mcp: run ${ended.runId} ended ${ended.status}; the session goes on in run ${next}`,
          ),
      },
      new StdioServerTransport(),
    );
  } catch (e) {
    await guard.close();
    throw e;
  }
  io.err(`loopguard mcp: run ${runId} (${where}); upstream: ${proxy.upstreamCommand}`);
  const server = served && metrics ? await served.startMetricsServer(metrics, metricsPort ?? 0) : null;
  if (server !== null) io.err(`loopguard mcp: metrics on ${server.url}`);
  // The stdio transport does not notice a closed stdin; a client ends the session by closing it.
  process.stdin.once('end', () => void proxy.close('the MCP client closed the session'));
  signal.addEventListener('abort', () => void proxy.close('loopguard mcp was stopped'), { once: true });
  const final = await proxy.closed;
  await server?.close();
  io.err(`loopguard mcp: run ${final.runId} ended ${final.status}`);
  const by = proxy.endedBy;
  if (by?.code === 'upstream_exited') {
    io.err(`loopguard mcp: upstream_exited: ${by.message} (${proxy.upstreamCommand})`);
    return 1;
  }
  return 0;
}
