/**
 * Makes a subject's compatibility level explicit before registering through
 * @kafkajs/confluent-schema-registry. A copy of infra/registry-compat.ts, because src/ must not
 * depend on the test infrastructure.
 *
 * Why: `SchemaRegistry.register()` first GETs `/config/{subject}` and throws "Compatibility does
 * not match the configuration (BACKWARD != NONE)" unless the answer equals the level it was given;
 * a 404 means "first registration" and is fine. Confluent answers 404 for a subject without its
 * own level, but Apicurio answers `{"compatibilityLevel":"NONE"}` once the subject exists, so a
 * second `register()` fails there. Apicurio 3.x accepts `PUT /config/{subject}` even before the
 * subject exists and then enforces the level (an incompatible new version gets HTTP 409).
 */
import { LoopguardError, UnavailableError } from '../domain/errors.js';

export type CompatibilityLevel =
  | 'NONE'
  | 'BACKWARD'
  | 'BACKWARD_TRANSITIVE'
  | 'FORWARD'
  | 'FORWARD_TRANSITIVE'
  | 'FULL'
  | 'FULL_TRANSITIVE';

/** Already at the level, set now, or left for register()'s first-registration path (a registry
 *  that keeps levels only for existing subjects answered 404 to the PUT). */
export type CompatibilityOutcome = 'already' | 'set' | 'deferred-until-first-register';

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';

function configUrl(registryUrl: string, subject: string): string {
  return `${registryUrl.replace(/\/+$/, '')}/config/${encodeURIComponent(subject)}`;
}

function unavailable(what: string, status: number, body: string): LoopguardError {
  return new UnavailableError('registry_unavailable', `${what}: HTTP ${status} ${body}`, {
    retriable: status >= 500,
    details: { status },
  });
}

async function currentLevel(registryUrl: string, subject: string): Promise<string | undefined> {
  const res = await fetch(configUrl(registryUrl, subject), { headers: { Accept: CONTENT_TYPE } });
  if (res.status === 404) {
    await res.body?.cancel();
    return undefined;
  }
  if (!res.ok) throw unavailable(`GET config of ${subject}`, res.status, await res.text());
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
    await res.body?.cancel();
    return 'deferred-until-first-register';
  }
  if (res.status === 409) {
    // Apicurio: another process set the subject's rule between our GET and PUT. Its level is
    // the one every loopguard process asks for, so a rule that now answers it is ours too.
    const body = await res.text();
    if ((await currentLevel(registryUrl, subject)) === level) return 'already';
    throw unavailable(`PUT config of ${subject} to ${level}`, res.status, body);
  }
  if (!res.ok) throw unavailable(`PUT config of ${subject} to ${level}`, res.status, await res.text());
  await res.body?.cancel();
  const after = await currentLevel(registryUrl, subject);
  if (after !== undefined && after !== level) {
    throw new LoopguardError('registry_config', `registry kept ${subject} at ${after} after PUT ${level}`);
  }
  return 'set';
}
