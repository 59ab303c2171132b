import { type AssistantLog, VOLATILES, volatilePart } from './assistant-log.js';
import type { Prng } from './prng.js';

/**
 * How a tool-using assistant works on everyday tasks, and how it gets stuck. Working runs write
 * a document piece by piece (distinct calls, each acknowledged with nothing), page through a
 * mailbox with an argument-less "next page", poll an export that reports how far it got, and
 * repeat a look-up a few times. Stuck runs repeat one failing call whose error differs each time
 * only in a volatile part, vary a call that keeps failing the same way, re-fetch a last page, or
 * go round two calls.
 */

const PEOPLE = ['ana', 'bo', 'chen', 'dara', 'eli', 'farah', 'gus', 'hana', 'ivo', 'jun'];
const TOPICS = ['invoice', 'offsite', 'budget', 'roadmap', 'hiring', 'travel', 'renewal', 'audit'];
const ACKS = ['', 'ok', '{"ok":true}', '{"status":"ok"}', 'null'];

const ack = (rng: Prng): string => rng.pick(ACKS);

/** A few look-ups that each answer something new. */
function lookAround(log: AssistantLog, rng: Prng): void {
  const who = rng.pick(PEOPLE);
  log.add('contacts_search', { name: who }, JSON.stringify([{ name: who, email: `${who}@example.com` }]));
  const day = `2026-03-${String(rng.int(10, 28))}`;
  log.add('calendar_list', { day }, `${day}: 09:30 standup; 14:00 ${rng.pick(TOPICS)} review`);
}

/** Writes a document piece by piece: distinct appends, each answered with nothing; then reads it back. */
function piecewiseWrite(log: AssistantLog, rng: Prng): void {
  lookAround(log, rng);
  const path = `notes/${rng.pick(TOPICS)}-${rng.int(1, 99)}.md`;
  const pieces = rng.int(4, 12);
  const reply = ack(rng);
  let body = '';
  for (let i = 0; i < pieces; i++) {
    const text = `## ${rng.pick(TOPICS)} ${i + 1}\n${rng.pick(PEOPLE)} owns item ${i + 1}.\n`;
    body += text;
    log.add('append_file', { path, text }, reply);
    // Now and then a look at what is there so far: it grew.
    if (rng.chance(0.25)) log.add('read_file', { path }, body);
  }
  log.add(
    'render_markdown',
    { path },
    `Rendered ${path}: ${pieces} sections in {v}`,
    `${rng.int(20, 300)}ms`,
  );
  log.add(
    'send_email',
    { to: `${rng.pick(PEOPLE)}@example.com`, attach: path },
    'Sent, message id {v}',
    `<${rng.int(1e5, 1e6)}@mail>`,
  );
}

/** Pages through a mailbox: "next page" takes no arguments and answers other messages each time. */
function argumentlessPaging(log: AssistantLog, rng: Prng): void {
  const topic = rng.pick(TOPICS);
  const pages = rng.int(3, 10);
  const page = (n: number): string =>
    `Page ${n} of ${pages} (fetched {v})\n` +
    Array.from(
      { length: 3 },
      (_, k) => `- from ${PEOPLE[(n * 3 + k) % PEOPLE.length]}: ${topic} #${n * 10 + k}`,
    ).join('\n');
  log.add('mail_search', { query: topic }, page(1), `10:0${rng.int(0, 9)}:${rng.int(10, 59)}`);
  for (let n = 2; n <= pages; n++)
    log.add('mail_next_page', {}, page(n), `10:1${rng.int(0, 9)}:${rng.int(10, 59)}`);
  log.add(
    'mail_open',
    { id: `${topic}-${rng.int(1, pages) * 10}` },
    `Subject: ${topic}\nBody: please review the ${topic} numbers.`,
  );
}

/** Starts an export and polls it: the same call, answering how far it got, until it is done. */
function pollExport(log: AssistantLog, rng: Prng): void {
  lookAround(log, rng);
  const job = `exp-${rng.int(100, 999)}`;
  log.add('export_report', { report: rng.pick(TOPICS) }, `Started job ${job}`);
  const total = rng.int(8, 20);
  const polls = rng.int(3, 6);
  for (let i = 1; i <= polls; i++) {
    const done = Math.min(total - 1, Math.round((i * total) / (polls + 1)));
    log.add('job_status', { job }, `running: ${done}/${total} sheets, updated {v}`, `${rng.int(1, 50)}s ago`);
  }
  log.add('job_status', { job }, `done: ${total}/${total} sheets, file exports/${job}.xlsx`);
}

/** Looks one thing up a few times in a row (the user asked again; nothing changed), then acts. */
function repeatFewTimes(log: AssistantLog, rng: Prng): void {
  lookAround(log, rng);
  const day = `2026-04-${String(rng.int(10, 28))}`;
  const agenda = `${day}: 11:00 ${rng.pick(TOPICS)} sync with ${rng.pick(PEOPLE)}`;
  // Mostly twice; sometimes three times, which no rule that counts repeats can tell from a loop.
  const times = rng.chance(0.2) ? 3 : 2;
  for (let i = 0; i < times; i++) log.add('calendar_list', { day }, agenda);
  const who = rng.pick(PEOPLE);
  log.add('calendar_create', { day, time: '15:00', with: who }, ack(rng));
  log.add('calendar_list', { day }, `${agenda}; 15:00 meeting with ${who}`);
}

/** The same call again and again, its error differing each time only in a volatile part. */
function volatileFailure(log: AssistantLog, rng: Prng): void {
  const kind = rng.pick(VOLATILES);
  const to = `${rng.pick(PEOPLE)}@example.com`;
  const n = rng.int(6, 30);
  const base = rng.int(10, 400);
  const message = rng.pick([
    'mailbox quota exceeded',
    'upstream service unavailable',
    'template render failed',
    'permission check timed out',
  ]);
  for (let i = 0; i < n; i++)
    log.fail('send_email', { to, template: 'weekly' }, message, volatilePart(kind, rng, i, base));
}

/** A call varied each time (another subject, another address) that fails the same way every time. */
function variedFailure(log: AssistantLog, rng: Prng): void {
  const kind = rng.pick(VOLATILES);
  const n = rng.int(4, 10);
  const base = rng.int(10, 400);
  for (let i = 0; i < n; i++)
    log.fail(
      'send_email',
      { to: `${PEOPLE[(base + i) % PEOPLE.length]}@example.com`, subject: `${rng.pick(TOPICS)} ${i}` },
      'sender address is not verified',
      volatilePart(kind, rng, i, base),
    );
}

/** Asks for the next page past the last one, again and again: the same last page each time. */
function lastPageAgain(log: AssistantLog, rng: Prng): void {
  const topic = rng.pick(TOPICS);
  log.add('mail_search', { query: topic }, `Page 1 of 1 (fetched {v})\n- from ana: ${topic}`, '09:00:01');
  const n = rng.int(3, 12);
  for (let i = 0; i < n; i++)
    log.add('mail_next_page', {}, `No more results (fetched {v})`, `09:0${(i + 1) % 10}:${10 + i}`);
}

/** Two calls in turn, each answering what it answered last time but for a volatile part. */
function statusRetryCycle(log: AssistantLog, rng: Prng): void {
  const job = `sync-${rng.int(100, 999)}`;
  const rounds = rng.int(3, 8);
  const kind = rng.pick(VOLATILES);
  for (let i = 0; i < rounds; i++) {
    log.add('job_status', { job }, `failed: calendar sync rejected ${'{v}'}`, volatilePart(kind, rng, i, 7));
    log.add('job_retry', { job }, `queued ${'{v}'}`, volatilePart(kind, rng, i, 11));
  }
}

export const ASSISTANT_WORKING = {
  'piecewise-write': piecewiseWrite,
  'argumentless-paging': argumentlessPaging,
  'poll-export': pollExport,
  'repeat-few-times': repeatFewTimes,
} as const;

export const ASSISTANT_STUCK = {
  'volatile-failure': volatileFailure,
  'varied-failure': variedFailure,
  'last-page-again': lastPageAgain,
  'status-retry-cycle': statusRetryCycle,
} as const;
