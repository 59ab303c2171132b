/** Public face of the events module: the codec and the schema stores. */
export { EventCodec } from './codec.js';
export { MemorySchemaStore } from './memory-schema-store.js';
export { RegistrySchemaStore, type RegistrySchemaStoreOptions } from './registry-schema-store.js';
export { type CompatibilityLevel, ensureSubjectCompatibility } from './subject-compatibility.js';
