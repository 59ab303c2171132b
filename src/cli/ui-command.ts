import { TOPICS } from '../log/event-log.js';
import { untilAborted } from './command-context.js';
import type { Io } from './io.js';
import { type Env, type KafkaFlags, kafkaConfig } from './kafka-config.js';
import { loadMetricsServer } from './optional-package.js';
import { startUiServer } from './ui-server.js';
import { withStore } from './with-store.js';

export const DEFAULT_UI_PORT = 4280;

export interface UiFlags extends KafkaFlags {
  readonly port?: number;
  readonly 'metrics-port'?: number;
  readonly 'allow-host'?: string[];
}

/** `loopguard ui`: serves the run list and each run's timeline on 127.0.0.1, read-only, until the signal. */
export async function uiCommand(f: UiFlags, env: Env, io: Io, signal: AbortSignal): Promise<number> {
  const port = f.port ?? DEFAULT_UI_PORT;
  const metricsPort = f['metrics-port'];
  // Loaded before anything starts: a missing prom-client leaves nothing running.
  const served = metricsPort === undefined ? null : await loadMetricsServer();
  return withStore(f, env, async (s) => {
    // On the embedded log the list is kept and read on from its offset; Kafka's runs topic has one per partition.
    const embedded = kafkaConfig(f, env) === null;
    const runIndex = s.runIndex;
    if (runIndex !== undefined && !runIndex.indexed)
      io.err(
        'ui: this data dir has no run index yet (written by an older loopguard): list pages scan its table until any writing command or `loopguard repair` adds it',
      );
    if (runIndex !== undefined && !runIndex.rowsKept)
      io.err(
        'ui: this data dir has no run rows yet (written by an older loopguard): filtered pages fold the whole log until any writing command or `loopguard repair` adds them',
      );
    const ui = await startUiServer(
      {
        scan: (apply) => s.scan(apply),
        ...(embedded ? { entries: (offset: number) => s.events.entries(TOPICS.runs, offset) } : {}),
        runs: runIndex && { ...runIndex, events: (runId: string) => s.stream.readStream(runId) },
      },
      port,
      '127.0.0.1',
      { allowHosts: f['allow-host'] ?? [] },
    );
    const metrics =
      served === null ? null : await served.startMetricsServer(served.serviceMetrics(), metricsPort ?? 0);
    io.err(
      `ui: ${ui.url} (read-only, ${s.where})${metrics ? `; metrics on ${metrics.url}` : ''}; Ctrl-C ends it`,
    );
    await untilAborted(signal);
    await Promise.all([ui.close(), metrics?.close()]);
    return 0;
  });
}
