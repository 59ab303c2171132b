import type { Command } from 'commander';
import type { AlertFlags } from './alert-command.js';
import {
  countOption,
  kafkaOptions,
  policyOption,
  portOption,
  positiveOption,
  repeatable,
} from './cli-options.js';
import type { CommandContext } from './command-context.js';
import { kafkaConfig } from './kafka-config.js';
import { KAFKA_PACKAGES, needs, type OptionalPackage } from './optional-package.js';

/** What alert and serve load: Kafka, and prom-client for their metrics. */
const WORKER_PACKAGES: readonly OptionalPackage[] = [...KAFKA_PACKAGES, 'prom-client'];

/**
 * The workers on Kafka, each until the shutdown signal: alert, project, serve. Each loads its
 * optional packages (kafkajs, prom-client) only when it runs.
 */
export function kafkaCommands(p: Command, c: CommandContext): void {
  const { io, env, run } = c;
  kafkaOptions(
    p
      .command('alert')
      .summary('delivers each stop report and fleet loop detection (stdout or a webhook), on Kafka')
      .option('--webhook <url>', 'POSTs each alert there, with retries (no credentials in it)')
      .option(
        '--webhook-header <header>',
        "'Name: value' sent with every POST, where a webhook's credentials go; repeatable",
        repeatable,
      )
      .addOption(
        positiveOption(
          '--dead-letter-after <n>',
          'delivery attempts before an alert goes to loopguard.dlq (default 20)',
        ),
      )
      .option('--group <group>', 'the consumer group (default loopguard-alert)')
      .addOption(positiveOption('--retry-base-ms <ms>', 'first retry delay'))
      .addOption(positiveOption('--retry-max-ms <ms>', 'longest retry delay'))
      .addOption(
        positiveOption('--session-timeout-ms <ms>', 'Kafka consumer session timeout (default 15000)'),
      )
      .addOption(portOption('--metrics-port <port>', 'serves GET /metrics on 127.0.0.1:port')),
  ).action(
    run(async (f) => {
      const kafka = kafkaConfig({ ...f, kafka: true }, env);
      const { alertCommand } = await needs('alert', WORKER_PACKAGES, () => import('./alert-command.js'));
      return alertCommand(kafka, f as AlertFlags, io, c.shutdown());
    }),
  );

  kafkaOptions(
    p
      .command('project')
      .summary('the copy projector alone: derives the stops and ledger copies from the runs topic')
      .option('--once', 'until what was recorded when it started is copied'),
  ).action(
    run(async (f) => {
      const kafka = kafkaConfig({ ...f, kafka: true }, env);
      const { projectCommand } = await needs('project', KAFKA_PACKAGES, () => import('./project-command.js'));
      return projectCommand(kafka, f.once === true, io, c.shutdown());
    }),
  );

  policyOption(
    kafkaOptions(
      p
        .command('serve')
        .summary('a guard worker for clients in any language, on Kafka')
        .option('--group <group>', 'the consumer group (default loopguard-serve)')
        .addOption(
          portOption('--metrics-port <port>', 'serves GET /metrics on all interfaces (0.0.0.0:port)'),
        )
        .addOption(positiveOption('--partitions <n>', 'partitions of the topics it creates'))
        .addOption(positiveOption('--session-timeout-ms <ms>', 'Kafka consumer session timeout'))
        .addOption(
          countOption('--snapshot-every <n>', "runs records between a partition's snapshots (default 1000)"),
        )
        .addOption(countOption('--ended-idle-ms <ms>', 'before an ended run leaves memory (default 600000)'))
        .option(
          '--from-beginning',
          'a new group decides what loopguard.requests already holds (default: it starts at the end)',
        )
        .option(
          '--tenant-keys <file>',
          "per-tenant keys (JSON): only requests signed with one are decided, on their tenant's runs",
        ),
    ),
  ).action(
    run(
      async (f) => {
        const kafka = kafkaConfig({ ...f, kafka: true }, env);
        const { serveCommand } = await needs('serve', WORKER_PACKAGES, () => import('./serve-command.js'));
        return serveCommand(kafka, f, io, c.shutdown());
      },
      { policy: true },
    ),
  );
}
