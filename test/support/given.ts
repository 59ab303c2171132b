import {
  type Command,
  DEFAULT_POLICY,
  DEFAULT_TOOL,
  type DeciderDeps,
  type DomainEvent,
  decide,
  diceSimilarity,
  type EventOf,
  type EventType,
  IllegalStateError,
  initialState,
  type LoopguardError,
  type NearDuplicatePolicy,
  type RecordedEvent,
  type RunPolicy,
  type RunState,
  resolvePolicy,
  type StopReport,
  type ToolPolicy,
} from '../../src/domain/index.js';
import { type Clock, type CommandInput, foldRun, stepRun } from '../../src/machines/index.js';
import { nodeHashing } from '../../src/runtime/node-hashing.js';

/** Given/when/then for the decider: commands in, recorded events and decisions out, time injected. */

export const deps: DeciderDeps = { hashing: nodeHashing('test-key'), similarity: diceSimilarity };

/** A clock the test moves by hand; nothing reads the wall clock. */
export class FakeClock implements Clock {
  constructor(private t = 0) {}
  now(): number {
    return this.t;
  }
  set(ms: number): void {
    this.t = ms;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export type PolicyOverrides = Partial<Omit<RunPolicy, 'tools' | 'rules' | 'nearDuplicate'>> & {
  readonly tools?: Readonly<Record<string, Partial<ToolPolicy>>>;
  readonly rules?: Partial<RunPolicy['rules']>;
  readonly nearDuplicate?: Partial<NearDuplicatePolicy>;
};

/** The default run policy with overrides (tools filled from the default tool policy). */
export function policy(o: PolicyOverrides = {}, taskType?: string): RunPolicy {
  const base = resolvePolicy(DEFAULT_POLICY, taskType);
  const tools: Record<string, ToolPolicy> = {};
  for (const [name, t] of Object.entries(o.tools ?? {})) tools[name] = { ...DEFAULT_TOOL, ...t };
  return {
    ...base,
    ...o,
    tools,
    rules: { ...base.rules, ...o.rules },
    nearDuplicate: { ...base.nearDuplicate, ...o.nearDuplicate },
  };
}

/** A command as a test writes it: `atMs` may be left out, the scenario's clock then stamps it. */
export type Cmd = CommandInput & { readonly atMs?: number };
type Of<T extends Command['type']> = Omit<Extract<Command, { type: T }>, 'type' | 'atMs'> & {
  readonly atMs?: number;
};

export const start = (o: PolicyOverrides = {}, extra: Partial<Omit<Of<'StartRun'>, 'policy'>> = {}): Cmd => ({
  type: 'StartRun',
  runId: 'run-1',
  policy: policy(o),
  ...extra,
});

export const call = (
  callId: string,
  tool: string,
  args: unknown = {},
  extra: Partial<Omit<Of<'RequestToolCall'>, 'callId' | 'tool' | 'args'>> = {},
): Cmd => ({ type: 'RequestToolCall', callId, tool, args, ...extra });

export const result = (
  callId: string,
  resultHash: string,
  extra: Partial<Omit<Of<'CompleteToolCall'>, 'callId' | 'resultHash'>> = {},
): Cmd => ({ type: 'CompleteToolCall', callId, kind: 'SUCCESS', resultHash, ...extra });

/** One executed call and its result. */
export const step = (
  callId: string,
  tool: string,
  args: unknown,
  resultHash: string,
  done: Partial<Omit<Of<'CompleteToolCall'>, 'callId' | 'resultHash'>> = {},
  req: Partial<Omit<Of<'RequestToolCall'>, 'callId' | 'tool' | 'args'>> = {},
): Cmd[] => [call(callId, tool, args, req), result(callId, resultHash, done)];

export const usage = (tokensIn: number, tokensOut: number, costUsd: number): Cmd => ({
  type: 'RecordModelUsage',
  tokensIn,
  tokensOut,
  costUsd,
});
export const finish = (verified: boolean, gaps?: readonly string[]): Cmd =>
  gaps === undefined ? { type: 'Finish', verified } : { type: 'Finish', verified, gaps };
export const cancel = (reason: string): Cmd => ({ type: 'Cancel', reason });
export const resume = (preconditionChange: string, extra: Partial<Of<'Resume'>> = {}): Cmd => ({
  type: 'Resume',
  preconditionChange,
  ...extra,
});
export const checkpoint = (checkpointId?: string): Cmd =>
  checkpointId === undefined ? { type: 'RecordCheckpoint' } : { type: 'RecordCheckpoint', checkpointId };

/** What one command led to. */
export class Outcome {
  constructor(
    readonly events: readonly DomainEvent[],
    readonly error: LoopguardError | null,
    readonly state: RunState,
  ) {}

  of<T extends EventType>(type: T): EventOf<T>[] {
    return this.events.filter((e): e is EventOf<T> => e.type === type);
  }
  get types(): EventType[] {
    return this.events.map((e) => e.type);
  }
  /** The guard's decision before the call, or after it (the only one of that phase). */
  decided(phase: 'before' | 'after'): EventOf<'GuardDecided'> {
    const d = this.of('GuardDecided').find((e) => e.phase === phase);
    if (d === undefined) throw new Error(`no ${phase} decision in ${this.types.join(', ')}`);
    return d;
  }
  get before(): EventOf<'GuardDecided'> {
    return this.decided('before');
  }
  get after(): EventOf<'GuardDecided'> {
    return this.decided('after');
  }
  get report(): StopReport | null {
    return this.of('RunStopped')[0]?.report ?? null;
  }
}

export class Scenario {
  state: RunState;
  readonly history: RecordedEvent[] = [];
  readonly clock = new FakeClock(0);

  constructor(readonly runId = 'run-1') {
    this.state = initialState(runId);
  }

  at(ms: number): this {
    this.clock.set(ms);
    return this;
  }

  advance(ms: number): this {
    this.clock.advance(ms);
    return this;
  }

  private run(cmd: Cmd): Outcome {
    const atMs = cmd.atMs ?? this.clock.now();
    if (cmd.atMs !== undefined) this.clock.set(cmd.atMs);
    const decided = decide(this.state, { ...cmd, atMs } as Command, deps, foldRun);
    if (!decided.ok) return new Outcome([], decided.error, this.state);
    // Through the run machine, as an actor takes them: a move it does not take refuses the command.
    const records: RecordedEvent[] = [];
    let s = this.state;
    for (const event of decided.value) {
      const rec: RecordedEvent = {
        eventId: `${this.runId}/${s.seq + 1}`,
        runId: this.runId,
        seq: s.seq + 1,
        atMs,
        event,
      };
      const next = stepRun(s, rec);
      if (next === null)
        return new Outcome(
          [],
          new IllegalStateError('illegal_transition', `${s.status} does not take ${event.type}`),
          this.state,
        );
      records.push(rec);
      s = next;
    }
    this.history.push(...records);
    this.state = s;
    return new Outcome(decided.value, null, this.state);
  }

  /** History: every command must be accepted, or the test setup is wrong. */
  given(...cmds: readonly (Cmd | readonly Cmd[])[]): this {
    for (const cmd of cmds.flat()) {
      const o = this.run(cmd);
      if (o.error !== null) throw new Error(`given ${cmd.type} rejected: ${o.error.code} ${o.error.message}`);
    }
    return this;
  }

  when(cmd: Cmd): Outcome {
    return this.run(cmd);
  }

  /** Several commands; the outcome of each, in order. */
  whenAll(...cmds: readonly (Cmd | readonly Cmd[])[]): Outcome[] {
    return cmds.flat().map((c) => this.run(c));
  }
}

export const given = (...cmds: readonly (Cmd | readonly Cmd[])[]): Scenario => new Scenario().given(...cmds);
