/** Public face of the events module: codec, wire framing, schema stores, serde and upcasters. */

export { normalizeSchema, type SchemaStore } from '../ports/schema-store.js';
export { EventCodec, type EventCodecOptions } from './codec.js';
export {
  AVRO_OPTS,
  ENVELOPE_NAME,
  type LoadedSchemas,
  loadSchemas,
  NAMESPACE,
  typeFromJson,
} from './envelope-schema.js';
export { MemorySchemaStore } from './memory-schema-store.js';
export { RegistrySchemaStore, type RegistrySchemaStoreOptions } from './registry-schema-store.js';
export { fromWire, toWire, type WireEnvelope, type WireFields } from './serde.js';
export { type CompatibilityLevel, ensureSubjectCompatibility } from './subject-compatibility.js';
export { type UpcastContext, type Upcaster, upcast } from './upcast.js';
export { frame, HEADER_BYTES, MAGIC_BYTE, unframe } from './wire.js';
