import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultSchemasDir, ENVELOPE_NAME, loadSchemas, NAMESPACE } from '../src/events/envelope-schema.js';
import { SAMPLE_EVENTS } from './log-sample-events.js';

interface Field {
  name: string;
  doc?: string;
  type: unknown;
  default?: unknown;
}
interface RecordSchema {
  type: string;
  name: string;
  namespace: string;
  doc?: string;
  fields: Field[];
}

const dir = defaultSchemasDir();
const files = readdirSync(dir).filter((f) => f.endsWith('.avsc'));
const schemas = files.map((f) => ({
  file: f,
  schema: JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')) as RecordSchema,
}));

describe('schemas/*.avsc', () => {
  it('holds one record per file, in the io.loopguard.events namespace, documented field by field', () => {
    for (const { file, schema } of schemas) {
      expect(schema.type, file).toBe('record');
      expect(schema.namespace, file).toBe(NAMESPACE);
      expect(schema.doc, file).toBeTruthy();
      for (const f of schema.fields) expect(f.doc, `${file} ${f.name}`).toBeTruthy();
    }
  });

  it('gives every nullable field a null default, so fields can be added compatibly', () => {
    for (const { file, schema } of schemas) {
      for (const f of schema.fields) {
        if (Array.isArray(f.type) && f.type[0] === 'null' && f.name !== 'payload') {
          expect(f.default, `${file} ${f.name}`).toBeNull();
        }
      }
    }
  });

  it('makes the envelope payload a union of one record per domain event type, in file order', () => {
    const envelope = schemas.find((s) => s.schema.name === 'Envelope')?.schema as RecordSchema;
    const payload = envelope.fields.find((f) => f.name === 'payload')?.type as string[];
    expect(payload.map((n) => n.replace(`${NAMESPACE}.`, ''))).toEqual(SAMPLE_EVENTS.map((e) => e.type));
    expect(envelope.fields.map((f) => f.name)).toEqual([
      'eventId',
      'runId',
      'seq',
      'atMs',
      'type',
      'payload',
    ]);
  });

  it('uses every file in the assembled envelope schema, docs included', () => {
    const { json, registry } = loadSchemas();
    const text = JSON.parse(json);
    expect(text.name).toBe(ENVELOPE_NAME);
    for (const { schema } of schemas) {
      expect(registry[`${NAMESPACE}.${schema.name}`], schema.name).toBeDefined();
      if (schema.name !== 'Envelope') expect(json).toContain(`"name":"${NAMESPACE}.${schema.name}"`);
    }
    expect(json).toContain('"doc":"Per-run sequence number, from 1 with no gaps."');
  });
});
