/**
 * The Python example (confluent-kafka, its Avro serializer and the schema registry) against a
 * real `loopguard serve` worker on the test broker: it publishes a looping run and receives the stop.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../infra/ports.js';
import { pythonWithRequirements } from '../infra/python-venv.js';
import { signRequest } from '../src/service/request-signature.js';
import { emptyRequest } from '../src/service/service-topics.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { spawnServe } from './support/service/serve-process.js';
import { readServiceTopics } from './support/service/service-topics-read.js';

const run = promisify(execFile);
const EXAMPLE = join(import.meta.dirname, '..', 'examples', 'python', 'looping_run.py');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

let python = '';
beforeAll(async () => {
  python = await pythonWithRequirements();
}, 300_000);

describe('Python client (confluent-kafka + Avro + schema registry)', () => {
  it('publishes a looping run and receives the stop', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const prefix = `py-${randomUUID().slice(0, 8)}.`;
    const [metricsPort] = await freePorts(1);
    const worker = spawnServe({
      brokers,
      registryUrl,
      topicPrefix: prefix,
      group: `g-${prefix}`,
      metricsPort,
    });
    cleanups.push(async () => {
      worker.child.kill('SIGTERM');
      await worker.exited;
    });
    await worker.waitFor(/ in group /);
    const runId = `python-${randomUUID().slice(0, 8)}`;
    const { stdout } = await run(python, [EXAMPLE], {
      env: {
        ...process.env,
        KAFKA_BROKERS: brokers.join(','),
        SCHEMA_REGISTRY_URL: registryUrl,
        LOOPGUARD_TOPIC_PREFIX: prefix,
        LOOPGUARD_RUN_ID: runId,
      },
      timeout: 90_000,
    });
    expect(stdout).toContain('step 1: execute');
    expect(stdout).toContain('step 2: execute');
    expect(stdout).toMatch(/step 3: stop_partial exact_repeat/);
    expect(stdout).toMatch(/stopped: STOPPED_LOOP_GUARD exact_repeat/);
    const report = JSON.parse(
      stdout
        .split('\n')
        .find((l) => l.startsWith('report: '))
        ?.slice(8) ?? 'null',
    );
    expect(report).toMatchObject({ terminalState: 'STOPPED_LOOP_GUARD', guardReason: 'exact_repeat' });

    // The worker read what Python wrote: each of its requests has one decision, for that run.
    const topics = await readServiceTopics(brokers, registryUrl, prefix);
    expect(topics.requests.map((r) => r.type)).toEqual([
      'START_RUN',
      'TOOL_CALL',
      'TOOL_RESULT',
      'TOOL_CALL',
      'TOOL_RESULT',
      'TOOL_CALL',
    ]);
    expect(topics.decisions.map((d) => d.request_id).sort()).toEqual(
      topics.requests.map((r) => r.request_id).sort(),
    );
    expect(new Set(topics.decisions.map((d) => d.run_id))).toEqual(new Set([runId]));

    // --metrics-port: the worker counts what it decided.
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^loopguard_serve_requests_decided_total 6$/m);
    expect(metrics).toMatch(/^loopguard_serve_assigned_partitions 6$/m);
    // The guard's own metrics, from the events the worker recorded: the stop and its rule.
    expect(metrics).toMatch(/^loopguard_decisions_total\{decision="stop_partial",rule="exact_repeat"\} 1$/m);
    expect(metrics).toMatch(
      /^loopguard_stops_total\{terminal_state="STOPPED_LOOP_GUARD",rule="exact_repeat"\} 1$/m,
    );
  }, 120_000);

  it("accepts a decision only when its run id and request id are both the request's", async () => {
    // The module connects nothing on import: only `answers`, the match every decision goes through.
    const script = [
      'import sys; sys.path.insert(0, sys.argv[1])',
      'from looping_run import answers',
      'req = {"run_id": "victim", "request_id": "r-1"}',
      'print(answers({"run_id": "attacker", "request_id": "r-1"}, req), answers({"run_id": "victim", "request_id": "r-1"}, req), answers({"run_id": "victim", "request_id": "r-2"}, req))',
    ].join('\n');
    const { stdout } = await run(python, ['-c', script, join(EXAMPLE, '..')], { timeout: 30_000 });
    expect(stdout.trim()).toBe('False True False');
  });

  it('signs its requests with a tenant key for a worker with --tenant-keys; unsigned, it is refused', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const prefix = `pyt-${randomUUID().slice(0, 8)}.`;
    const dir = mkdtempSync(join(tmpdir(), 'lg-py-keys-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const keys = join(dir, 'keys.json');
    const secret = 'python-agent-secret-0123456789abcdef';
    writeFileSync(keys, JSON.stringify({ keys: [{ id: 'py-agent', tenant: 'acme', secret }] }));
    const worker = spawnServe({
      brokers,
      registryUrl,
      topicPrefix: prefix,
      group: `g-${prefix}`,
      tenantKeys: keys,
    });
    cleanups.push(async () => {
      worker.child.kill('SIGTERM');
      await worker.exited;
    });
    await worker.waitFor(/ in group /);
    const env = {
      ...process.env,
      KAFKA_BROKERS: brokers.join(','),
      SCHEMA_REGISTRY_URL: registryUrl,
      LOOPGUARD_TOPIC_PREFIX: prefix,
    };
    const signedRun = await run(python, [EXAMPLE], {
      env: {
        ...env,
        LOOPGUARD_RUN_ID: 'py-signed',
        LOOPGUARD_KEY_ID: 'py-agent',
        LOOPGUARD_KEY_SECRET: secret,
      },
      timeout: 90_000,
    });
    expect(signedRun.stdout).toMatch(/stopped: STOPPED_LOOP_GUARD exact_repeat/);
    await expect(
      run(python, [EXAMPLE], { env: { ...env, LOOPGUARD_RUN_ID: 'py-unsigned' }, timeout: 90_000 }),
    ).rejects.toMatchObject({ stderr: expect.stringContaining('unauthenticated (key_id)') });
  }, 240_000);

  it('signs byte for byte as the TypeScript client does, numbers and text included', async () => {
    const fields = {
      tool: 'charge',
      args_json: '{"amount":10,"note":"caf\u00e9 \\n"}',
      cost_estimate_usd: 10,
      cost_usd: 1e-7,
      tokens: 1_700_000_000_000,
      gaps: ['a "gap"', 'ünïcode\ttab'],
      after_user_turn: false,
    };
    const req = { ...emptyRequest('r-1', 'run-1', 'TOOL_CALL', 1_700_000_000_123), ...fields };
    const want = signRequest(req, 'py-agent', 'k'.repeat(40)).signature;
    const script = [
      'import sys, json; sys.path.insert(0, sys.argv[1])',
      'from looping_run import signed',
      'req = json.loads(sys.argv[2])',
      'req["cost_estimate_usd"] = 10.0',
      'print(signed(req, "py-agent", "k" * 40)["signature"])',
    ].join('\n');
    const { stdout } = await run(python, ['-c', script, join(EXAMPLE, '..'), JSON.stringify(req)], {
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe(want);
  });
});
