/**
 * Pins the wire bytes of a service request and decision (schema id 1 from a fresh
 * MemorySchemaStore): other languages write and read these bytes, so a change here is a wire
 * change; evolve schemas/service/*.avsc compatibly instead of re-pinning. Also: a request written
 * by an older client, with fewer fields, still decodes (BACKWARD), a type added later reads as
 * UNKNOWN to an older reader, and bad values are refused with the field named.
 */
import avsc from 'avsc';
import { describe, expect, it } from 'vitest';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { SERVICE_SCHEMAS, ServiceCodec, serviceSchemaText } from '../src/service/service-codec.js';
import { emptyRequest, type WireDecision, type WireRequest } from '../src/service/service-topics.js';

const REQUEST: WireRequest = {
  ...emptyRequest('req-1', 'run-1', 'TOOL_CALL', 1_700_000_000_000),
  tool: 'search',
  args_json: '{"q":"avro"}',
  side_effect: false,
};

const DECISION: WireDecision = {
  request_id: 'req-1',
  run_id: 'run-1',
  decision: 'execute',
  status: 'RUNNING',
  seq: 3,
  rule: null,
  message: 'ok',
  warning: null,
  wait_until_ms: null,
  evidence_json: '{}',
  result_json: null,
  report_json: null,
  error_code: null,
  error_field: null,
  worker: 'w1',
  decided_at_ms: 1_700_000_000_001,
  checkpoint_id: null,
};

const GOLDEN = {
  request:
    '00000000010a7265712d310a72756e2d310280a0abfef962000000020c73656172636802187b2271223a226176726f227d' +
    '0002000000000000000000000000000000000000' +
    // tokens_in, tokens_out, checkpoint_id, happened, settled_by (added for MODEL_USAGE,
    // CHECKPOINT and SETTLE): null each.
    '0000000000' +
    // new_operation_key (added for REISSUE): null.
    '00' +
    // key_id, signature (added for tenant keys): null each.
    '0000' +
    // can_reconcile, reconciled (added for a remote run's reconcile): null each.
    '0000',
  decision:
    '00000000010a7265712d310a72756e2d310e657865637574650e52554e4e494e470600046f6b000002047b7d00000000' +
    '04773182a0abfef962' +
    // checkpoint_id: null.
    '00',
};

/** Added for a remote run's reconcile hook (after the tenant keys). */
const RECONCILE_FIELDS = ['can_reconcile', 'reconciled'];

/** The request schema as it was before the reconcile fields: clients and workers may still write with it. */
function schemaBeforeReconcile(): string {
  const schema = JSON.parse(serviceSchemaText(SERVICE_SCHEMAS.request)) as { fields: { name: string }[] };
  return JSON.stringify({
    ...schema,
    fields: schema.fields.filter((f) => !RECONCILE_FIELDS.includes(f.name)),
  });
}

/** The request schema as it was before REISSUE: clients and workers may still read and write with it. */
function schemaBeforeReissue(): string {
  const schema = JSON.parse(serviceSchemaText(SERVICE_SCHEMAS.request)) as {
    fields: { name: string; type: { symbols?: string[] } }[];
  };
  return JSON.stringify({
    ...schema,
    fields: schema.fields
      .filter((f) => !['new_operation_key', 'key_id', 'signature', ...RECONCILE_FIELDS].includes(f.name))
      .map((f) =>
        f.name === 'type'
          ? { ...f, type: { ...f.type, symbols: f.type.symbols?.filter((t) => t !== 'REISSUE') } }
          : f,
      ),
  });
}

/** The schema files as they were before MODEL_USAGE, CHECKPOINT and SETTLE: clients may still write with them. */
function schemaBeforeRunApi(file: string): string {
  const schema = JSON.parse(serviceSchemaText(file)) as {
    fields: { name: string; type: unknown }[];
  };
  const added = new Set([
    'tokens_in',
    'tokens_out',
    'checkpoint_id',
    'happened',
    'settled_by',
    'new_operation_key',
    'key_id',
    'signature',
    ...RECONCILE_FIELDS,
  ]);
  return JSON.stringify({
    ...schema,
    fields: schema.fields
      .filter((f) => !added.has(f.name))
      .map((f) =>
        f.name === 'type'
          ? {
              ...f,
              type: {
                type: 'enum',
                name: 'RequestType',
                symbols: ['START_RUN', 'TOOL_CALL', 'TOOL_RESULT', 'FINISH', 'CANCEL', 'RESUME'],
              },
            }
          : f,
      ),
  });
}

describe('service wire format', () => {
  it('encodes a request to the pinned bytes and back', async () => {
    const codec = await ServiceCodec.create<WireRequest>(
      new MemorySchemaStore(),
      'loopguard.requests-value',
      SERVICE_SCHEMAS.request,
    );
    expect(codec.schemaId).toBe(1);
    expect(codec.encode(REQUEST).toString('hex')).toBe(GOLDEN.request);
    expect(await codec.decode(Buffer.from(GOLDEN.request, 'hex'))).toEqual(REQUEST);
  });

  it('encodes a decision to the pinned bytes and back', async () => {
    const codec = await ServiceCodec.create<WireDecision>(
      new MemorySchemaStore(),
      'loopguard.decisions-value',
      SERVICE_SCHEMAS.decision,
    );
    expect(codec.encode(DECISION).toString('hex')).toBe(GOLDEN.decision);
    expect(await codec.decode(Buffer.from(GOLDEN.decision, 'hex'))).toEqual(DECISION);
  });

  it('reads a request written with an older, smaller schema: the fields it lacks take their defaults', async () => {
    const store = new MemorySchemaStore();
    // The old writer: only the three required fields.
    const framed = await writtenBy(store, ['START_RUN', 'TOOL_CALL'], 'START_RUN');
    const current = await ServiceCodec.create<WireRequest>(
      store,
      'loopguard.requests-value',
      SERVICE_SCHEMAS.request,
    );
    expect(await current.decode(framed)).toEqual(emptyRequest('r', 'x', 'START_RUN', 0));
  });

  it('reads the bytes pinned before MODEL_USAGE, CHECKPOINT and SETTLE: the new fields read as null', async () => {
    for (const [file, subject, hex, value] of [
      [SERVICE_SCHEMAS.request, 'loopguard.requests-value', GOLDEN.request.slice(0, -20), REQUEST],
      [SERVICE_SCHEMAS.decision, 'loopguard.decisions-value', GOLDEN.decision.slice(0, -2), DECISION],
    ] as const) {
      const store = new MemorySchemaStore();
      expect(await store.register(subject, schemaBeforeRunApi(file))).toBe(1);
      const current = await ServiceCodec.create<unknown>(store, subject, file);
      expect(current.schemaId).not.toBe(1);
      expect(await current.decode(Buffer.from(hex, 'hex'))).toEqual(value);
    }
  });

  it('reads the bytes pinned before REISSUE: new_operation_key reads as null', async () => {
    const store = new MemorySchemaStore();
    const subject = 'loopguard.requests-value';
    expect(await store.register(subject, schemaBeforeReissue())).toBe(1);
    const current = await ServiceCodec.create<WireRequest>(store, subject, SERVICE_SCHEMAS.request);
    expect(current.schemaId).not.toBe(1);
    expect(await current.decode(Buffer.from(GOLDEN.request.slice(0, -10), 'hex'))).toEqual(REQUEST);
  });

  it('reads the bytes pinned before reconcile: can_reconcile and reconciled read as null', async () => {
    const store = new MemorySchemaStore();
    const subject = 'loopguard.requests-value';
    expect(await store.register(subject, schemaBeforeReconcile())).toBe(1);
    const current = await ServiceCodec.create<WireRequest>(store, subject, SERVICE_SCHEMAS.request);
    expect(current.schemaId).not.toBe(1);
    expect(await current.decode(Buffer.from(GOLDEN.request.slice(0, -4), 'hex'))).toEqual(REQUEST);
    // And a reconcile answer written now reaches an older worker without the fields it lacks.
    const answer: WireRequest = { ...REQUEST, operation_key: 'pay-1', can_reconcile: true, reconciled: true };
    const older = avsc.Type.forSchema(JSON.parse(schemaBeforeReconcile()));
    const writer = avsc.Type.forSchema(JSON.parse(serviceSchemaText(SERVICE_SCHEMAS.request)));
    const framed = current.encode(answer);
    const read = older.fromBuffer(framed.subarray(5), older.createResolver(writer)) as object;
    expect(read).toMatchObject({ tool: 'search', operation_key: 'pay-1', type: 'TOOL_CALL' });
    expect(Object.keys(read)).not.toContain('reconciled');
  });

  it('carries a REISSUE, which a reader from before REISSUE reads as UNKNOWN (and its worker refuses)', async () => {
    const reissue: WireRequest = {
      ...emptyRequest('req-2', 'run-1', 'REISSUE', 1_700_000_000_000),
      operation_key: 'pay-4',
      new_operation_key: 'pay-4#2',
      reason: 'ordered twice',
      approved_by: 'ops',
    };
    const codec = await ServiceCodec.create<WireRequest>(
      new MemorySchemaStore(),
      'loopguard.requests-value',
      SERVICE_SCHEMAS.request,
    );
    const framed = codec.encode(reissue);
    expect(await codec.decode(framed)).toEqual(reissue);
    // An older worker resolves the writer's schema (from the registry) onto its own.
    const older = avsc.Type.forSchema(JSON.parse(schemaBeforeReissue()));
    const writer = avsc.Type.forSchema(JSON.parse(serviceSchemaText(SERVICE_SCHEMAS.request)));
    const read = older.fromBuffer(framed.subarray(5), older.createResolver(writer)) as WireRequest;
    expect(read).toMatchObject({ type: 'UNKNOWN', operation_key: 'pay-4', reason: 'ordered twice' });
    // Appended after UNKNOWN: every older symbol keeps its index (a reader that skipped the
    // registry would still read the older types right).
    const symbols = (text: string): string[] =>
      (JSON.parse(text) as { fields: { name: string; type: { symbols: string[] } }[] }).fields.find(
        (f) => f.name === 'type',
      )?.type.symbols ?? [];
    expect(symbols(serviceSchemaText(SERVICE_SCHEMAS.request))).toEqual([
      ...symbols(schemaBeforeReissue()),
      'REISSUE',
    ]);
  });

  it('reads a request type from a newer writer as UNKNOWN (the enum default), for the worker to refuse', async () => {
    const store = new MemorySchemaStore();
    const framed = await writtenBy(store, ['START_RUN', 'TELEPORT'], 'TELEPORT');
    const current = await ServiceCodec.create<WireRequest>(
      store,
      'loopguard.requests-value',
      SERVICE_SCHEMAS.request,
    );
    expect((await current.decode(framed)).type).toBe('UNKNOWN');
  });

  it('refuses to encode a value the schema does not allow, naming the field', async () => {
    const codec = await ServiceCodec.create<WireRequest>(
      new MemorySchemaStore(),
      's',
      SERVICE_SCHEMAS.request,
    );
    expect(() => codec.encode({ ...REQUEST, progress_version: 'x' as unknown as number })).toThrow(
      /progress_version/,
    );
  });

  it('reports an undecodable value with a code, never a crash', async () => {
    const codec = await ServiceCodec.create<WireRequest>(
      new MemorySchemaStore(),
      's',
      SERVICE_SCHEMAS.request,
    );
    await expect(codec.decode(Buffer.from('hello'))).rejects.toMatchObject({ code: 'bad_magic' });
    await expect(codec.decode(Buffer.from([0, 0, 0, 0, 1, 0xff]))).rejects.toMatchObject({
      code: 'bad_payload',
    });
  });
});

/** A request from a writer whose schema has only the three required fields and these types, framed. */
async function writtenBy(store: MemorySchemaStore, symbols: string[], type: string): Promise<Buffer> {
  const schema = JSON.stringify({
    type: 'record',
    name: 'Request',
    namespace: 'io.loopguard.service',
    fields: [
      { name: 'request_id', type: 'string' },
      { name: 'run_id', type: 'string' },
      { name: 'type', type: { type: 'enum', name: 'RequestType', symbols } },
    ],
  });
  const id = await store.register('loopguard.requests-value', schema);
  const body = avsc.Type.forSchema(JSON.parse(schema)).toBuffer({ request_id: 'r', run_id: 'x', type });
  return Buffer.concat([Buffer.from([0, 0, 0, 0, id]), body]);
}
