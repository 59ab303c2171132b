/**
 * SchemaStore backed by a Confluent-compatible schema registry (Confluent, or Apicurio's
 * `/apis/ccompat/v7`). Subjects are registered with BACKWARD compatibility, so a new version may
 * only add fields with defaults / remove fields: readers on the new schema can read every record
 * already on the topic. Ids are the registry's global ids, so any Confluent client can decode our
 * records with `GET /schemas/ids/{id}`.
 */
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { LoopguardError, UnavailableError } from '../domain/errors.js';
import { normalizeSchema, type SchemaStore, unknownSchema } from '../ports/schema-store.js';
import { type CompatibilityLevel, ensureSubjectCompatibility } from './subject-compatibility.js';

export interface RegistrySchemaStoreOptions {
  /** Confluent-compatible base URL, e.g. `http://127.0.0.1:8081/apis/ccompat/v7`. */
  readonly url: string;
  /** Level enforced on every subject we register under; BACKWARD unless told otherwise. */
  readonly compatibility?: CompatibilityLevel;
}

const ACCEPT = 'application/vnd.schemaregistry.v1+json';

/** mappersmith (the library's HTTP client) rejects with an object carrying `status`. */
function statusOf(e: unknown): number | undefined {
  if (e && typeof e === 'object' && 'status' in e && typeof e.status === 'number') return e.status;
  return undefined;
}

function mapRegisterError(e: unknown, subject: string): LoopguardError {
  if (e instanceof LoopguardError) return e;
  const status = statusOf(e);
  const message = e instanceof Error ? e.message : JSON.stringify(e);
  if (status === 409) {
    return new LoopguardError('incompatible_schema', `schema is not compatible with ${subject}: ${message}`, {
      cause: e,
      details: { subject },
    });
  }
  if (status === 422 || (e instanceof Error && e.name.includes('InvalidSchema'))) {
    return new LoopguardError('bad_schema', `registry refused the schema for ${subject}: ${message}`, {
      cause: e,
      details: { subject },
    });
  }
  return new UnavailableError('registry_unavailable', `registering under ${subject} failed: ${message}`, {
    cause: e,
    retriable: status === undefined || status >= 500,
    details: { subject, status },
  });
}

export class RegistrySchemaStore implements SchemaStore {
  private readonly registry: SchemaRegistry;
  private readonly url: string;
  private readonly level: CompatibilityLevel;
  /** Schemas by id never change in a registry, so caching them forever is safe. */
  private readonly byId = new Map<number, Promise<string>>();
  /** Subjects whose level we already made explicit in this process. */
  private readonly prepared = new Set<string>();

  constructor(opts: RegistrySchemaStoreOptions) {
    this.url = opts.url.replace(/\/+$/, '');
    this.level = opts.compatibility ?? 'BACKWARD';
    this.registry = new SchemaRegistry({ host: this.url, retry: { retries: 2 } });
  }

  async register(subject: string, text: string): Promise<number> {
    // As the local stores do: whitespace never mints a new version, and non-JSON is bad_schema.
    const schema = normalizeSchema(text);
    try {
      if (!this.prepared.has(subject)) {
        await ensureSubjectCompatibility(this.url, subject, this.level);
        this.prepared.add(subject);
      }
      const { id } = await this.registry.register(
        { type: SchemaType.AVRO, schema },
        { subject, compatibility: COMPATIBILITY[this.level] },
      );
      this.byId.set(id, Promise.resolve(schema));
      return id;
    } catch (e) {
      throw mapRegisterError(e, subject);
    }
  }

  schemaById(id: number): Promise<string> {
    let found = this.byId.get(id);
    if (found === undefined) {
      found = this.fetchSchema(id);
      this.byId.set(id, found);
      // A failed lookup (registry down, unknown id) must not be remembered.
      found.catch(() => this.byId.delete(id));
    }
    return found;
  }

  /** Plain REST, not the library's getSchema: that one returns a parsed type, we want the text. */
  private async fetchSchema(id: number): Promise<string> {
    let res: Response;
    try {
      res = await fetch(`${this.url}/schemas/ids/${id}`, { headers: { Accept: ACCEPT } });
    } catch (e) {
      throw new UnavailableError('registry_unavailable', `registry at ${this.url} did not answer`, {
        cause: e,
      });
    }
    if (res.status === 404) {
      await res.body?.cancel();
      throw unknownSchema(id);
    }
    if (!res.ok) {
      throw new UnavailableError(
        'registry_unavailable',
        `GET schema ${id}: HTTP ${res.status} ${await res.text()}`,
        {
          retriable: res.status >= 500,
          details: { status: res.status },
        },
      );
    }
    const body = (await res.json()) as { schema?: string };
    if (typeof body.schema !== 'string') throw unknownSchema(id);
    return body.schema;
  }
}
