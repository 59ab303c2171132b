import { type Command, Option } from 'commander';
import { LoopguardError, type RecordedEvent } from '../domain/index.js';
import { auditHtmlCommand, auditOutput } from './audit-command.js';
import {
  jsonOption,
  logOptions,
  policyOption,
  portOption,
  positiveOption,
  repeatable,
} from './cli-options.js';
import type { CommandContext } from './command-context.js';
import { fleetCommand } from './fleet-command.js';
import { rebuildCommand } from './rebuild-command.js';
import { replayCommand } from './replay-command.js';
import { printStop } from './stops-command.js';
import { DEFAULT_UI_PORT, type UiFlags, uiCommand } from './ui-command.js';
import { whatifCommand } from './whatif-command.js';
import { withStore } from './with-store.js';

/** The commands on the log, embedded or Kafka: replay, rebuild, whatif, audit, ui, fleet, stops. */
export function logCommands(p: Command, c: CommandContext): void {
  const { io, env, run } = c;
  policyOption(
    logOptions(
      jsonOption(
        p
          .command('replay')
          .summary('runs recorded agent traces through the guard, recording every event')
          .argument('<files...>', 'trace files (JSON lines)'),
      ),
    ),
  ).action(
    run(
      (f, files) =>
        replayCommand(
          files,
          f,
          (work) =>
            withStore(
              f,
              env,
              async (s) =>
                work({
                  knownRunIds: await s.knownRunIds(),
                  where: s.where,
                  secretKey: s.secretKey(env),
                  append: (runId, r) => s.stream.appendToStream(runId, r, { expectedStreamVersion: 0 }),
                }),
              'write',
            ),
          io,
        ),
      { policy: true },
    ),
  );

  logOptions(jsonOption(p.command('rebuild').summary('rebuilds every projection from the log'))).action(
    run((f) =>
      withStore(f, env, async (s) =>
        rebuildCommand((pr) => s.rebuild(pr), { json: f.json ?? false, total: await s.eventCount() }, io),
      ),
    ),
  );

  policyOption(
    logOptions(
      jsonOption(
        p.command('whatif').summary('re-decides every recorded run under another policy, writing nothing'),
      ),
    ),
    'the new policy (required)',
  ).action(
    run(
      (f) => {
        const policy = f.policy;
        if (policy === undefined)
          throw new LoopguardError('usage', 'whatif: give the new policy, --policy NEW.json');
        return withStore(f, env, async (s) =>
          whatifCommand(
            (apply) => s.scan(apply),
            { policy, json: f.json ?? false, total: await s.eventCount() },
            io,
          ),
        );
      },
      { policy: true },
    ),
  );

  logOptions(
    p
      .command('audit')
      .summary("a run's timeline: each call, its decision, the rule and evidence, the result")
      .argument('<run-id>')
      .addOption(new Option('--json', 'the timeline as one JSON object').conflicts('html'))
      .option('--html <file>', 'writes the timeline as one self-contained, script-free HTML file'),
  ).action(
    run((f, [runId]) => {
      const id = runId as string;
      const html = f.html as string | undefined;
      if (html !== undefined)
        return withStore(f, env, (s) => auditHtmlCommand(id, html, (apply) => s.scan(apply), io));
      return withStore(f, env, async (s) => {
        const pr = await s.rebuild();
        return auditOutput(id, pr.audit.timeline(id), f.json ?? false, io, pr.tree.of(id));
      });
    }),
  );

  logOptions(
    p
      .command('ui')
      .summary('serves the run list and each run timeline on 127.0.0.1, read-only')
      .addOption(portOption('--port <port>', `the port (default ${DEFAULT_UI_PORT})`))
      .addOption(
        portOption('--metrics-port <port>', 'serves GET /metrics on 127.0.0.1:port (0: any free port)'),
      )
      .option(
        '--allow-host <name>',
        'answers requests whose Host is NAME too (beside 127.0.0.1, localhost, [::1]); repeatable',
        repeatable,
      ),
  ).action(run((f) => uiCommand(f as UiFlags, env, io, c.shutdown())));

  logOptions(
    jsonOption(
      p
        .command('fleet')
        .summary('finds loops many runs share and publishes each detection once on the stops topic')
        .option('--follow', 'keeps watching (needs Kafka)')
        .addOption(positiveOption('--threshold <n>', 'distinct runs on one signature (default 5)'))
        .addOption(positiveOption('--window-ms <ms>', 'the sliding window on event time (default 600000)'))
        .option('--group <group>', 'the consumer group of --follow (default loopguard-fleet)'),
    ),
  ).action(
    run((f) =>
      // It publishes its detections on the stops topic.
      withStore(
        f,
        env,
        (s) => fleetCommand(s, { ...f, json: f.json ?? false }, io, f.follow ? c.shutdown() : undefined),
        'write',
      ),
    ),
  );

  logOptions(
    jsonOption(
      p
        .command('stops')
        .summary('stop reports and fleet loop detections')
        .option('--follow', 'as they happen'),
    ),
  ).action(
    run((f) =>
      withStore(f, env, async (s) => {
        const print = (e: RecordedEvent) => printStop(e, f.json === true, io);
        if (f.follow) await s.events.followStops(0, print, c.shutdown());
        else for await (const e of s.readStops()) print(e);
        return 0;
      }),
    ),
  );
}
