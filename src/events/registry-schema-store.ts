/**
 * SchemaStore backed by a Confluent-compatible schema registry (Confluent, or Apicurio's
 * `/apis/ccompat/v7`). Subjects are registered with BACKWARD compatibility, so a new version may
 * only add fields with defaults / remove fields: readers on the new schema can read every record
 * already on the topic. Ids are the registry's global ids, so any Confluent client can decode our
 * records with `GET /schemas/ids/{id}`.
 */
import { LoopguardError, UnavailableError } from '../domain/errors.js';
import { normalizeSchema, type SchemaStore, unknownSchema } from '../ports/schema-store.js';
import { type RegistryRequestOptions, registryRequest, unexpectedAnswer } from './registry-http.js';
import { type CompatibilityLevel, ensureSubjectCompatibility } from './subject-compatibility.js';

export interface RegistrySchemaStoreOptions {
  /** Confluent-compatible base URL, e.g. `http://127.0.0.1:8081/apis/ccompat/v7`. */
  readonly url: string;
  /** Level enforced on every subject we register under; BACKWARD unless told otherwise. */
  readonly compatibility?: CompatibilityLevel;
  /** Deadline of one request to the registry (default 10 s); registry-http.ts retries a few. */
  readonly requestTimeoutMs?: number;
}

export class RegistrySchemaStore implements SchemaStore {
  private readonly url: string;
  private readonly level: CompatibilityLevel;
  private readonly http: RegistryRequestOptions;
  /** Schemas by id never change in a registry, so caching them forever is safe. */
  private readonly byId = new Map<number, Promise<string>>();
  /** Subjects whose level we already made explicit in this process. */
  private readonly prepared = new Set<string>();

  constructor(opts: RegistrySchemaStoreOptions) {
    this.url = opts.url.replace(/\/+$/, '');
    this.level = opts.compatibility ?? 'BACKWARD';
    this.http = opts.requestTimeoutMs === undefined ? {} : { timeoutMs: opts.requestTimeoutMs };
  }

  async register(subject: string, text: string): Promise<number> {
    // As the local stores do: whitespace never mints a new version, and non-JSON is bad_schema.
    const schema = normalizeSchema(text);
    const level = this.prepared.has(subject)
      ? 'already'
      : await ensureSubjectCompatibility(this.url, subject, this.level, this.http);
    this.prepared.add(subject);
    // Registering a schema the subject already has answers its id again: safe to retry.
    const what = `registering under ${subject}`;
    const url = `${this.url}/subjects/${encodeURIComponent(subject)}/versions`;
    const res = await registryRequest(url, what, { method: 'POST', body: { schema } }, this.http);
    if (res.status === 409)
      throw new LoopguardError(
        'incompatible_schema',
        `schema is not compatible with ${subject}: ${await res.text()}`,
        { details: { subject } },
      );
    if (res.status === 422)
      throw new LoopguardError(
        'bad_schema',
        `registry refused the schema for ${subject}: ${await res.text()}`,
        { details: { subject } },
      );
    if (!res.ok) throw await unexpectedAnswer(what, res);
    const { id } = (await res.json()) as { id?: unknown };
    if (typeof id !== 'number')
      throw new UnavailableError('registry_unavailable', `${what}: the answer has no id`, {
        retriable: false,
        details: { subject },
      });
    // A registry that keeps levels only for existing subjects takes the level now.
    if (level === 'deferred-until-first-register')
      await ensureSubjectCompatibility(this.url, subject, this.level, this.http);
    this.byId.set(id, Promise.resolve(schema));
    return id;
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

  private async fetchSchema(id: number): Promise<string> {
    const what = `GET schema ${id}`;
    const res = await registryRequest(`${this.url}/schemas/ids/${id}`, what, {}, this.http);
    if (res.status === 404) {
      await res.body?.cancel();
      throw unknownSchema(id);
    }
    if (!res.ok) throw await unexpectedAnswer(what, res);
    const body = (await res.json()) as { schema?: string };
    if (typeof body.schema !== 'string') throw unknownSchema(id);
    return body.schema;
  }
}
