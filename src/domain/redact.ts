/**
 * Secrets never reach the log in plain text. A value is replaced by `redacted:<keyed hash>` when
 * its key names a secret, or when the value itself looks like one, wherever it sits: a token with
 * a well-known prefix, a bearer/basic credential, a JWT, credentials in a URL or its query, an
 * Authorization or Cookie header, `name=value` or `"name": "value"` text with a secret name, and
 * long random-looking strings. The keyed hash keeps equal secrets equal (so loops still show)
 * while a guessable one cannot be confirmed without the key. Redacting twice changes nothing.
 */

/** Hashing is injected: the domain stays free of node: modules and of hidden keys. */
export interface Hashing {
  /** A stable digest of a string (hex). */
  digest(text: string): string;
  /** A keyed digest, so equal secrets still compare equal without being readable. */
  keyed(text: string): string;
}

const PLAIN_KEY = /^[a-z0-9]*$/;
const NOT_KEY_CHAR = /[^a-z0-9]/g;
/**
 * A key name as the name lists spell it: lower case, letters and digits only (`api_key` -> `apikey`).
 * Most keys already are (`query`, `page`): those are returned as they are, with no new string.
 */
export const normalisedKey = (key: string): string =>
  PLAIN_KEY.test(key) ? key : key.toLowerCase().replace(NOT_KEY_CHAR, '');

/** Key names, normalised (lower case, letters and digits only), whose whole value is a secret. */
const SECRET_NAME =
  /secret|passw|passphrase|authoriz|apikey|accesskey|privatekey|sshkey|signingkey|encryptionkey|masterkey|cookie|credential|signature|jwt|bearer|sessionid|sessionkey/;
const SECRET_EXACT: ReadonlySet<string> = new Set(['pwd', 'pass', 'auth', 'session', 'sid', 'otp', 'sig']);

/**
 * A name ending or starting with "token" is a secret ("access_token", "tokenId", "token_value");
 * one ending in "tokens" is a count ("max_tokens").
 */
export function isSecretKey(key: string): boolean {
  const k = normalisedKey(key);
  return (
    SECRET_EXACT.has(k) ||
    k.endsWith('token') ||
    (k.startsWith('token') && !k.startsWith('tokens')) ||
    SECRET_NAME.test(k)
  );
}

const MARK = 'redacted:';
export const redactedMark = (text: string, hashing: Hashing): string => `${MARK}${hashing.keyed(text)}`;

/** Headers whose value is a credential, written out in text ("Cookie: session=..."). */
const HEADER =
  /\b((?:proxy-)?authorization|set-cookie|cookie|x-api-key|x-auth-token)("?\s*[:=]\s*"?)(?!redacted:)([^\s"][^\r\n"]*)/gi;
/** A credential after the scheme has a digit, or is long: "Basic Instinct" and "basic economy" stay. */
const SCHEME =
  /\b(bearer|basic)(\s+)(?!redacted:)(?=[A-Za-z._~+/=-]*\d|[A-Za-z0-9._~+/=-]{16})([A-Za-z0-9._~+/=-]{8,})/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g;
/** Well-known key formats; sk-/rk- keys need a digit, so "sk-learn-models" stays readable. */
const PREFIXED =
  /\b(?:(?:sk|rk)[-_](?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{12,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|glpat-[A-Za-z0-9_-]{16,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,})/g;
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)(?!redacted:)([^\s:/@"]+:[^\s/@"]+)@/gi;
/** `name=value`, `name: value`, `"name": "value"`: the value goes when the name is a secret's. */
const NAME_SEP = /(?<=^|[?&;,:/|[\s"'{(])("?)([A-Za-z][A-Za-z0-9_.-]{1,63})\1\s*[:=]\s*"?/g;
/** Matched on the text after a name, from its start: no regex whose lastIndex the module keeps. */
const VALUE = /^(?!redacted:)[^\s"&;,})]+/;
/** Long runs of token characters: redacted when they look random (see `looksRandom`). */
const RUN = /[A-Za-z0-9+_=-]{24,}/g;

/** Bits per character; random base64 is near 6, prose near 4, identifiers lower. */
function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length);
  return h;
}

/**
 * Upper and lower case and at least two digits, and over 4 bits per character: generated keys
 * are; words, camelCase names, hex digests and UUIDs (one case only) are not.
 */
const looksRandom = (s: string): boolean =>
  /[A-Z]/.test(s) && /[a-z]/.test(s) && /\d.*\d/.test(s) && entropy(s) > 4;

/**
 * Names are matched without their values, so in "gave up: password=x" the name "up" does not
 * swallow the "password=x" that follows it.
 */
function redactNamed(text: string, mark: (s: string) => string): string {
  let out = '';
  let done = 0;
  for (const m of text.matchAll(NAME_SEP)) {
    const at = m.index + m[0].length;
    if (at < done || !isSecretKey(m[2] ?? '')) continue;
    const value = VALUE.exec(text.slice(at))?.[0];
    if (value === undefined) continue;
    out += text.slice(done, at) + mark(value);
    done = at + value.length;
  }
  return done === 0 ? text : out + text.slice(done);
}

/**
 * Some part of every pattern above: text with none of them (most arguments) is returned at once,
 * without running each pattern over it. The long-run test is separate (see hasLongRun): in one
 * alternation it is far slower, and this runs on every string of every call.
 */
const HINT =
  /secret|pass|auth|key|cookie|credential|signature|jwt|bearer|basic|session|token|pwd|sid|otp|sig|eyj|sk[-_]|rk[-_]|gh[pousr]_|github_pat|xox|akia|aiza|glpat|npm_|hf_|sg\.|:\/\//i;
/** Whether the text holds 24 characters in a row of `RUN`'s class, in one pass (RUN retries each start). */
function hasLongRun(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const token =
      (c >= 97 && c <= 122) ||
      (c >= 65 && c <= 90) ||
      (c >= 48 && c <= 57) ||
      c === 43 /* + */ ||
      c === 95 /* _ */ ||
      c === 61 /* = */ ||
      c === 45; /* - */
    if (!token) run = 0;
    else if (++run === 24) return true;
  }
  return false;
}
const mayHoldSecret = (text: string): boolean => HINT.test(text) || (text.length >= 24 && hasLongRun(text));

/** One pass of every pattern; a header goes first, so its whole value goes, not just its first word. */
function redactOnce(text: string, mark: (s: string) => string): string {
  return redactNamed(
    text.replace(HEADER, (_m, name: string, sep: string, value: string) => `${name}${sep}${mark(value)}`),
    mark,
  )
    .replace(SCHEME, (_m, scheme: string, sp: string, value: string) => `${scheme}${sp}${mark(value)}`)
    .replace(JWT, mark)
    .replace(PREFIXED, mark)
    .replace(URL_USERINFO, (_m, scheme: string, userinfo: string) => `${scheme}${mark(userinfo)}@`)
    .replace(RUN, (s) => (looksRandom(s) ? mark(s) : s));
}

/**
 * The text with every secret-shaped part replaced by its keyed hash. Repeated until nothing
 * changes: one replacement can expose another shape ("0eyJ..." becomes ".eyJ..."), and an
 * operation key is redacted by the runtime and again by the decider, which must agree.
 */
export function redactText(text: string, hashing: Hashing): string {
  if (text.length < 6 || !mayHoldSecret(text)) return text;
  const mark = (s: string) => redactedMark(s, hashing);
  let out = text;
  for (let pass = 0; pass < 8; pass++) {
    const next = redactOnce(out, mark);
    if (next === out) return out;
    out = next;
  }
  return out;
}
