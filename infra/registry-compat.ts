/**
 * Makes a subject's compatibility level explicit before registering through
 * @kafkajs/confluent-schema-registry.
 *
 * Why: `SchemaRegistry.register()` first GETs `/config/{subject}` and throws
 * "Compatibility does not match the configuration (BACKWARD != NONE)" unless the answer equals
 * the level it was given (default BACKWARD); a 404 means "first registration" and is fine.
 * Confluent answers 404 for a subject without its own level, but Apicurio answers
 * `{"compatibilityLevel":"NONE"}` (it ignores the global level there) once the subject exists,
 * so the second `register()` of a subject fails. Apicurio 3.x accepts `PUT /config/{subject}`
 * even before the subject exists and from then on answers the level we set, and enforces it
 * (an incompatible new version gets 409). Call this before every `register()` with the same
 * level you pass to `register()` (or rely on its default, BACKWARD).
 */

export type CompatibilityLevel =
  | 'NONE'
  | 'BACKWARD'
  | 'BACKWARD_TRANSITIVE'
  | 'FORWARD'
  | 'FORWARD_TRANSITIVE'
  | 'FULL'
  | 'FULL_TRANSITIVE';

/** What happened: already at `level`, set now, or (a registry that only keeps levels for
 *  existing subjects answered 404) left for register()'s first-registration path to set. */
export type CompatibilityOutcome = 'already' | 'set' | 'deferred-until-first-register';

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';

function configUrl(registryUrl: string, subject: string): string {
  return `${registryUrl.replace(/\/+$/, '')}/config/${encodeURIComponent(subject)}`;
}

async function currentLevel(registryUrl: string, subject: string): Promise<string | undefined> {
  const res = await fetch(configUrl(registryUrl, subject), { headers: { Accept: CONTENT_TYPE } });
  if (res.status === 404) {
    await res.body?.cancel();
    return undefined;
  }
  if (!res.ok) throw new Error(`GET config of ${subject}: HTTP ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { compatibilityLevel?: string; compatibility?: string };
  return (body.compatibilityLevel ?? body.compatibility)?.toUpperCase();
}

/**
 * Ensures `GET {registryUrl}/config/{subject}` answers `level`, so that
 * `registry.register(schema, { subject, compatibility: level })` passes its check.
 * `registryUrl` is the Confluent-compatible base, e.g. `http://127.0.0.1:8081/apis/ccompat/v7`.
 */
export async function ensureSubjectCompatibility(
  registryUrl: string,
  subject: string,
  level: CompatibilityLevel = 'BACKWARD',
): Promise<CompatibilityOutcome> {
  if ((await currentLevel(registryUrl, subject)) === level) return 'already';
  const res = await fetch(configUrl(registryUrl, subject), {
    method: 'PUT',
    headers: { 'Content-Type': CONTENT_TYPE, Accept: CONTENT_TYPE },
    body: JSON.stringify({ compatibility: level }),
  });
  if (res.status === 404) {
    // e.g. Apicurio 2.x keeps rules only on existing artifacts. register() then sees a 404
    // on GET too, treats it as a first registration and PUTs the level itself afterwards.
    await res.body?.cancel();
    return 'deferred-until-first-register';
  }
  if (!res.ok)
    throw new Error(`PUT config of ${subject} to ${level}: HTTP ${res.status} ${await res.text()}`);
  await res.body?.cancel();
  const after = await currentLevel(registryUrl, subject);
  if (after !== undefined && after !== level) {
    throw new Error(`registry kept ${subject} at ${after} after PUT ${level}`);
  }
  return 'set';
}
