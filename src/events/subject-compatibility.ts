/**
 * Makes a subject's compatibility level explicit before its schemas are registered, so the
 * registry refuses an incompatible version (HTTP 409) whatever its default. Confluent answers 404
 * for a subject without its own level; Apicurio answers `{"compatibilityLevel":"NONE"}` once the
 * subject exists. Apicurio 3.x accepts `PUT /config/{subject}` even before the subject exists and
 * then enforces the level.
 */
import { LoopguardError } from '../domain/errors.js';
import { type RegistryRequestOptions, registryRequest, unexpectedAnswer } from './registry-http.js';

export type CompatibilityLevel =
  | 'NONE'
  | 'BACKWARD'
  | 'BACKWARD_TRANSITIVE'
  | 'FORWARD'
  | 'FORWARD_TRANSITIVE'
  | 'FULL'
  | 'FULL_TRANSITIVE';

/** Already at the level, set now, or left for register()'s first registration (the PUT got 404). */
export type CompatibilityOutcome = 'already' | 'set' | 'deferred-until-first-register';

function configUrl(registryUrl: string, subject: string): string {
  return `${registryUrl.replace(/\/+$/, '')}/config/${encodeURIComponent(subject)}`;
}

async function currentLevel(
  registryUrl: string,
  subject: string,
  http: RegistryRequestOptions,
): Promise<string | undefined> {
  const what = `GET config of ${subject}`;
  const res = await registryRequest(configUrl(registryUrl, subject), what, {}, http);
  if (res.status === 404) {
    await res.body?.cancel();
    return undefined;
  }
  if (!res.ok) throw await unexpectedAnswer(what, res);
  const body = (await res.json()) as { compatibilityLevel?: string; compatibility?: string };
  return (body.compatibilityLevel ?? body.compatibility)?.toUpperCase();
}

/**
 * Ensures `GET {registryUrl}/config/{subject}` answers `level`; a registry that keeps levels only
 * for existing subjects is asked again after the subject's first registration.
 * `registryUrl` is the Confluent-compatible base, e.g. `http://127.0.0.1:8081/apis/ccompat/v7`.
 */
export async function ensureSubjectCompatibility(
  registryUrl: string,
  subject: string,
  level: CompatibilityLevel = 'BACKWARD',
  http: RegistryRequestOptions = {},
): Promise<CompatibilityOutcome> {
  if ((await currentLevel(registryUrl, subject, http)) === level) return 'already';
  const what = `PUT config of ${subject} to ${level}`;
  const put = { method: 'PUT', body: { compatibility: level } } as const;
  const res = await registryRequest(configUrl(registryUrl, subject), what, put, http);
  if (res.status === 404) {
    await res.body?.cancel();
    return 'deferred-until-first-register';
  }
  if (res.status === 409) {
    // Apicurio: another process set the subject's rule between our GET and PUT. Its level is
    // the one every loopguard process asks for, so a rule that now answers it is ours too.
    const refused = await unexpectedAnswer(what, res);
    if ((await currentLevel(registryUrl, subject, http)) === level) return 'already';
    throw refused;
  }
  if (!res.ok) throw await unexpectedAnswer(what, res);
  await res.body?.cancel();
  const after = await currentLevel(registryUrl, subject, http);
  if (after !== undefined && after !== level) {
    throw new LoopguardError('registry_config', `registry kept ${subject} at ${after} after PUT ${level}`);
  }
  return 'set';
}
