import { describe, expect, it } from 'vitest';
import { MemorySchemaStore } from '../src/events/index.js';
import { RecordCodec } from '../src/events/record-codec.js';

describe('RecordCodec', () => {
  it('refuses a record whose writer schema cannot be read as the current one as incompatible_schema, as the event codec does', async () => {
    const store = new MemorySchemaStore();
    const writer = await RecordCodec.register<{ y: string }>(store, 'old-value', {
      type: 'record',
      name: 'R',
      fields: [{ name: 'y', type: 'string' }],
    });
    // x has no default: a record without it cannot be read as this schema.
    const reader = await RecordCodec.register<{ x: number }>(store, 'new-value', {
      type: 'record',
      name: 'R',
      fields: [{ name: 'x', type: 'int' }],
    });
    const bytes = writer.encode({ y: 'a' });
    await expect(reader.decode(bytes)).rejects.toMatchObject({
      code: 'incompatible_schema',
      details: { schemaId: writer.schemaId },
    });
    // Not remembered: the same answer again, not a cached raw error.
    await expect(reader.decode(bytes)).rejects.toMatchObject({ code: 'incompatible_schema' });
  });
});
