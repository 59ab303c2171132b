/**
 * The guard as a remote service, with the library's run API: `startRun`, `run.call`,
 * `run.finish`, `run.cancel`, `resume`. Each step is a request on loopguard.requests (keyed by run
 * id) and waits for its decision on loopguard.decisions. Fails closed: without a decision within
 * `timeoutMs` the step rejects with `decision_timeout` and no tool runs.
 */
import { randomUUID } from 'node:crypto';
import type { Admin } from 'kafkajs';
import { type Hashing, UnavailableError } from '../domain/index.js';
import { type Clock, systemClock } from '../machines/index.js';
import type { StartRun } from '../runtime/guard.js';
import { nodeHashing } from '../runtime/node-hashing.js';
import { chooseSecretKey } from '../runtime/secret-key.js';
import { openService, type ServiceConnection } from '../service/open-service.js';
import { signRequest } from '../service/request-signature.js';
import {
  REQUEST_ID_HEADER,
  SERVICE_TOPICS,
  type WireDecision,
  type WireRequest,
} from '../service/service-topics.js';
import { DecisionWaiters } from './decision-waiters.js';
import { RemoteRun } from './remote-run.js';

export interface RemoteGuardOptions {
  readonly brokers: readonly string[];
  /** Confluent-compatible schema registry URL. */
  readonly registry: string;
  readonly topicPrefix?: string;
  /** How long a step waits for its decision before failing closed. Default 10 s. */
  readonly timeoutMs?: number;
  /** Passed to a tool as its AbortSignal deadline. Default 120 s (the policy default). */
  readonly stepTimeoutMs?: number;
  readonly clock?: Clock;
  /** Partitions of the service topics if this client creates them (else the workers do). */
  readonly partitions?: number;
  /**
   * Key of the keyed hash that replaces secret values in a tool's result before it is published
   * (else LOOPGUARD_SECRET_KEY; required, as on every Kafka path). The workers redact what they
   * record again, so a client without our redaction (any language) leaks nothing into the runs.
   */
  readonly secretKey?: string;
  /**
   * The key of this client's tenant that signs every request (a worker with --tenant-keys decides
   * only signed requests, each on its tenant's runs; an approver's key resumes, reissues, settles).
   */
  readonly credentials?: { readonly keyId: string; readonly secret: string };
  /**
   * How many times a step publishes the same request again (same request id: the worker answers
   * it once) after a `decision_timeout` before it rejects. Default 2. A run whose step still got
   * no decision sends that request again before its next one (see RemoteRun).
   */
  readonly resends?: number;
}

export class RemoteGuard {
  private constructor(
    private readonly conn: ServiceConnection,
    private readonly admin: Admin,
    private readonly waiters: DecisionWaiters,
    private readonly opts: RemoteGuardOptions,
    readonly hashing: Hashing,
  ) {}

  static async connect(opts: RemoteGuardOptions): Promise<RemoteGuard> {
    const hashing = nodeHashing(
      chooseSecretKey(opts.secretKey, { kind: 'shared', where: 'createRemoteGuard' }),
    );
    const conn = await openService({
      brokers: opts.brokers,
      registryUrl: opts.registry,
      clientId: 'loopguard-client',
      ...(opts.topicPrefix ? { topicPrefix: opts.topicPrefix } : {}),
      ...(opts.partitions ? { partitions: opts.partitions } : {}),
    });
    const admin = conn.log.kafka.admin();
    try {
      await Promise.all([SERVICE_TOPICS.requests, SERVICE_TOPICS.decisions].map((t) => conn.log.prepare(t)));
      await admin.connect();
      const waiters = await DecisionWaiters.follow(conn.log, conn.decisions, admin);
      return new RemoteGuard(conn, admin, waiters, opts, hashing);
    } catch (e) {
      await admin.disconnect().catch(() => undefined);
      await conn.close();
      throw e;
    }
  }

  get resends(): number {
    return this.opts.resends ?? 2;
  }

  get stepTimeoutMs(): number {
    return this.opts.stepTimeoutMs ?? 120_000;
  }

  now(): number {
    return (this.opts.clock ?? systemClock).now();
  }

  /** Sends one request and waits for its decision (the low-level form of every step). */
  async request(unsigned: WireRequest): Promise<WireDecision> {
    const c = this.opts.credentials;
    // Signed as it is sent: a signature holds only minutes around the workers' clock, and one
    // published again byte for byte is a replay, so a re-send after a timeout is signed anew.
    const req =
      c === undefined ? unsigned : signRequest({ ...unsigned, sent_at_ms: this.now() }, c.keyId, c.secret);
    // A value the schema cannot carry (a reason that is no string) is the caller's mistake, refused
    // with bad_request naming the field, not a guard that could not be reached.
    const value = this.conn.requests.encode(req);
    const decided = this.waiters.wait(req.run_id, req.request_id, this.opts.timeoutMs ?? 10_000);
    try {
      await this.conn.log.append(SERVICE_TOPICS.requests, [
        { key: req.run_id, value, headers: { [REQUEST_ID_HEADER]: req.request_id } },
      ]);
    } catch (e) {
      decided.catch(() => undefined);
      throw new UnavailableError(
        'guard_unavailable',
        `request ${req.request_id} was not published: ${(e as Error).message}`,
        { cause: e },
      );
    }
    return decided;
  }

  newRequestId(): string {
    return randomUUID();
  }

  async startRun(opts: StartRun): Promise<RemoteRun> {
    const run = new RemoteRun(this, opts.runId);
    await run.send('START_RUN', {
      task_type: opts.taskType ?? null,
      tenant: opts.tenant ?? null,
      progress_version: opts.progressVersion ?? null,
    });
    return run;
  }

  /** Records an approved precondition change on a stopped run, served by whichever worker owns it. */
  async resume(
    runId: string,
    change: { preconditionChange: string; approvedBy?: string },
  ): Promise<RemoteRun> {
    const run = new RemoteRun(this, runId);
    await run.send('RESUME', {
      precondition_change: change.preconditionChange,
      approved_by: change.approvedBy ?? null,
    });
    return run;
  }

  /** A handle on a run started elsewhere (another process of the same agent, say). */
  run(runId: string): RemoteRun {
    return new RemoteRun(this, runId);
  }

  async close(): Promise<void> {
    await this.waiters.close();
    await this.admin.disconnect().catch(() => undefined);
    await this.conn.close();
  }
}

export function createRemoteGuard(opts: RemoteGuardOptions): Promise<RemoteGuard> {
  return RemoteGuard.connect(opts);
}
