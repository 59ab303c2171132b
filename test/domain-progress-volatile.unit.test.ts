import { describe, expect, it } from 'vitest';
import { isFailedResult } from '../src/domain/failed-result.js';
import { maskedText, normalisedResult } from '../src/domain/normalised-result.js';
import { call, given, result, start, step } from './support/given.js';

/**
 * Given/when/then for results judged by their class (volatile parts masked) and for the
 * no-progress rules that tell spinning from working.
 */
const json = (text: string) => ({ resultJson: JSON.stringify(text) });
const raw = (text: string) => `raw:${text}`;
const SUBJECTS = ['budget', 'travel', 'offsite', 'hiring', 'audit', 'renewal', 'roadmap', 'invoice'];

describe('volatile parts of a result are masked', () => {
  it.each([
    ['a counter', 'Error: quota exceeded (attempt 3)', 'Error: quota exceeded (attempt 4)'],
    ['a line number', 'SyntaxError: unexpected EOF at line 42', 'SyntaxError: unexpected EOF at line 45'],
    ['a timestamp', 'failed at 2026-03-01T10:32:11Z', 'failed at 2026-03-01T10:32:19.5Z'],
    ['a clock time', 'upstream down (checked 10:32:11)', 'upstream down (checked 10:33:02)'],
    ['a duration', '1 failed in 0.52s', '1 failed in 1.07s'],
    ['a hex id', 'object 4f2a91c0 not found', 'object 9be7d31a not found'],
    [
      'a UUID',
      'request 3f2a9c1e-8b7d-4e2f-9a1b-0c3d5e7f9a2b refused',
      'request 00000000-8b7d-4e2f-9a1b-0c3d5e7f9a2c refused',
    ],
    ['a generated id', 'req_8f3kd92ja71 timed out', 'req_1x9qq04zz83 timed out'],
    ['a temporary path', 'cannot read /tmp/tmpab12cd/out.txt', 'cannot read /tmp/tmpzz98qq/out.txt'],
  ])('%s: two answers that differ only there compare equal', (_, a, b) => {
    expect(maskedText(a)).toBe(maskedText(b));
    expect(a).not.toBe(b);
  });

  it.each([
    ['a number that is the whole answer', '1023.0', '1203.0'],
    ['a percentage (how far a job got)', 'Collecting deps ... 12%', 'Collecting deps ... 24%'],
    ['a fraction (how far a job got)', 'exported 3/10 sheets', 'exported 7/10 sheets'],
    ['a version', 'installed pkg 1.2.3', 'installed pkg 1.2.4'],
    ['digits inside a name', 'test_case_3 passed', 'test_case_4 passed'],
    ['an item number', 'ticket #1041: open', 'ticket #1042: open'],
    ['a value printed in a mapping', "DEBUG {'a': 0}\n1 failed", "DEBUG {'a': 2}\n1 failed"],
    ['a member of JSON after a prefix', 'stats {"rows": 3, "ok": true}', 'stats {"rows": 5, "ok": true}'],
    ['different words', 'Page 2: from ana about budget', 'Page 3: from bo about travel'],
  ])('%s is what the answer says: kept', (_, a, b) => {
    expect(maskedText(a)).not.toBe(maskedText(b));
  });

  it('keeps JSON numbers and status elements, masks the text around them, and leaves a result with nothing volatile untouched', () => {
    expect(normalisedResult(JSON.stringify({ balance: 120.5, note: 'as of 10:32' }))).toBe(
      '{"balance":120.5,"note":"as of <time>"}',
    );
    expect(
      normalisedResult(JSON.stringify('<returncode>1</returncode><output>\n1 failed in 0.52s</output>')),
    ).toBe(JSON.stringify('<returncode>1</returncode><output>\n<n> failed in <duration></output>'));
    const plain = JSON.stringify({ rows: ['a', 'b'] });
    expect(normalisedResult(plain)).toBe(plain);
  });
});

describe('a repeated call whose error differs only in a volatile part', () => {
  it('given an identical call failing twice with a moving counter, when it is asked a third time, then it is refused, as the one-line rule would', () => {
    const s = given(start());
    for (let i = 1; i <= 2; i++) {
      const error = `Error: mailbox quota exceeded (attempt ${i})`;
      s.given(step(`c${i}`, 'send_email', { to: 'ana@example.com' }, raw(error), json(error)));
    }
    const o = s.when(call('c3', 'send_email', { to: 'ana@example.com' }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'exact_repeat' });
    // The stop names the calls it compared and the (masked) class they shared.
    expect(o.before.message).toMatch(
      /calls c1 -> [0-9a-f]{12} \(volatile parts masked\), c2 -> [0-9a-f]{12}/,
    );
    const [first, second] = [...o.before.message.matchAll(/-> ([0-9a-f]{12})/g)].map((m) => m[1]);
    expect(first).toBe(second);
    expect(o.report?.evidence.counts).toEqual({ repeats: 2 });
  });

  it('while the raw hash of each result is still recorded as it came', () => {
    const s = given(start());
    const hashes: string[] = [];
    for (let i = 1; i <= 2; i++) {
      const error = `Error: upstream unavailable after ${100 * i}ms`;
      s.given(call(`c${i}`, 'fetch', { url: 'https://x' }));
      const done = s.when(result(`c${i}`, raw(error), json(error))).of('ToolCallCompleted')[0];
      hashes.push(done?.resultHash ?? '');
      expect(done?.resultClass).toMatch(/^n:/);
    }
    expect(hashes).toEqual([
      raw('Error: upstream unavailable after 100ms'),
      raw('Error: upstream unavailable after 200ms'),
    ]);
  });

  it('but an identical poll whose answer says how far it got is not a loop', () => {
    const s = given(start());
    for (let i = 1; i <= 8; i++) {
      const out = `running: ${i}/10 sheets, updated ${i * 3}s ago`;
      const o = s.when(call(`p${i}`, 'job_status', { job: 'exp-1' }));
      expect(o.before.decision, `poll ${i}`).toBe('execute');
      expect(s.when(result(`p${i}`, raw(out), json(out))).after.decision).toBe('continue');
    }
  });
});

describe('a printed value that changes is what the answer says, however alike the rest', () => {
  const test = { command: 'pytest tests/test_router.py' };
  const failure = "F test_parse: AssertionError: assert {'a': 1} == {'a': '1'}\n1 failed";
  const print = (line: number) => ({ command: `sed -i '${line}a print("DEBUG", value)' src/router.py` });
  const unprint = { command: `sed -i '/print("DEBUG", value)/d' src/router.py` };
  /** How the harness of the recorded run answers a quiet command (synthetic editor-tools). */
  const quiet = '(no output)';

  it('given debug prints added at line 43, then 64, each run and removed, when the line-43 round is done again and prints another value, then the test after it still runs', () => {
    const s = given(start(), step('t0', 'bash', test, raw(failure), json(failure)));
    const lines = [43, 64, 43];
    for (const [i, line] of lines.entries()) {
      const printed = `DEBUG {'a': ${i}}\n${failure}`;
      s.given(step(`p${i}`, 'bash', print(line), raw(quiet), json(quiet)));
      s.given(step(`tp${i}`, 'bash', test, raw(printed), json(printed)));
      s.given(step(`u${i}`, 'bash', unprint, raw(quiet), json(quiet)));
      const o = s.when(call(`t${i}`, 'bash', test));
      expect(o.before.decision, `test after round ${i}`).toBe('execute');
      s.given(result(`t${i}`, raw(failure), json(failure)));
    }
  });

  it('and so a value in a printed mapping that keeps moving is news, as a JSON number value always was: an identical call answering it goes on (the cost of the rule: a counter printed that way is not masked)', () => {
    const s = given(start());
    for (let i = 1; i <= 6; i++) {
      const out = `queued {'position': ${7 - i}}`;
      const o = s.when(call(`q${i}`, 'job_status', { job: 'exp-1' }));
      expect(o.before.decision, `ask ${i}`).toBe('execute');
      s.given(result(`q${i}`, raw(out), json(out)));
    }
  });

  it('while a counter outside any printed mapping is still masked: the repeated error with a moving attempt number is stopped', () => {
    const s = given(start());
    for (let i = 1; i <= 2; i++) {
      const error = `Error: quota exceeded {"scope": "mail"} (attempt ${i})`;
      s.given(step(`c${i}`, 'send_email', { to: 'ana@example.com' }, raw(error), json(error)));
    }
    expect(s.when(call('c3', 'send_email', { to: 'ana@example.com' })).before.rule).toBe('exact_repeat');
  });
});

describe('the same failure three times since anything changed', () => {
  const refused = (i: number) => `Error: sender address is not verified (request id ${1000 + i})`;

  it('given one failure from three differently worded calls, when the third comes back, then the run stops (repeated_failure)', () => {
    const s = given(
      start(),
      step(
        'm1',
        'send_email',
        { to: 'ana@example.com', subject: 'budget' },
        raw(refused(1)),
        json(refused(1)),
      ),
      step(
        'm2',
        'send_email',
        { to: 'bo@example.com', subject: 'travel 2' },
        raw(refused(2)),
        json(refused(2)),
      ),
    );
    s.given(call('m3', 'send_email', { to: 'chen@example.com', subject: 'audit' }));
    const o = s.when(result('m3', raw(refused(3)), json(refused(3))));
    expect(o.after).toMatchObject({ decision: 'stop', rule: 'repeated_failure' });
    expect(o.after.message).toContain('calls m1 -> ');
    expect(o.after.message).toContain('m3 -> ');
    expect(o.after.evidence.counts).toEqual({ sameFailure: 3 });
  });

  it('but an edit between the failures is work: the same failing test after each distinct edit goes on', () => {
    const s = given(start());
    const fail = '<returncode>1</returncode><output>F test_parse: AssertionError in 0.4s</output>';
    for (let i = 0; i < 6; i++) {
      s.given(step(`e${i}`, 'bash', { command: `sed -i '${10 + i}s/a/b/' src/parse.py` }, 'empty', json('')));
      s.given(call(`t${i}`, 'bash', { command: 'pytest tests/test_parse.py' }));
      expect(s.when(result(`t${i}`, raw(`${fail}${i}`), json(fail))).after.decision, `test ${i}`).toBe(
        'continue',
      );
    }
  });

  it('and successes in between are not failures', () => {
    const s = given(start());
    for (let i = 0; i < 6; i++) {
      s.given(call(`q${i}`, 'search', { q: `flights ${i}` }));
      expect(
        s.when(result(`q${i}`, raw(`none ${i}`), json('No flights found for that day'))).after.decision,
      ).toBe('continue');
    }
  });
});

describe('acknowledgements of distinct calls are work; repeats are not', () => {
  it('given a file written piece by piece (distinct appends, each answered "ok" or nothing), then nothing is stopped and no_progress stays at 0', () => {
    const s = given(start());
    const acks = ['', 'ok', '<returncode>0</returncode>\n<output>\n</output>', '{"ok":true}'];
    for (let i = 0; i < 12; i++) {
      const o = s.when(call(`w${i}`, 'append_file', { path: 'notes.md', text: `## part ${i}\nline ${i}\n` }));
      expect(o.before.decision, `piece ${i}`).toBe('execute');
      const ack = acks[i % acks.length] ?? '';
      expect(s.when(result(`w${i}`, raw(ack), json(ack))).after.decision).toBe('continue');
      expect(s.state.noProgress).toBe(0);
    }
    s.given(call('run', 'run_script', { path: 'notes.md' }));
    expect(
      s.when(result('run', 'rendered', json('Rendered notes.md: 12 sections in 88ms'))).after.decision,
    ).toBe('continue');
  });

  it('but the same append again and again is stopped', () => {
    const s = given(start(), step('w1', 'append_file', { path: 'a', text: 'x' }, 'ok', json('ok')));
    s.given(step('w2', 'append_file', { path: 'a', text: 'x' }, 'ok', json('ok')));
    expect(s.when(call('w3', 'append_file', { path: 'a', text: 'x' })).before.rule).toBe('exact_repeat');
  });

  it('given an argument-less "next page" that answers other messages each time (with a fetch time in each), then paging is never stopped', () => {
    const s = given(start());
    for (let n = 1; n <= 12; n++) {
      const page = `Page ${n} of 12 (fetched 10:${10 + n}:05)\n- ${SUBJECTS[n % 8]} from ${['ana', 'bo', 'chen'][n % 3]}: item #${n * 10}`;
      const o = s.when(call(`p${n}`, 'mail_next_page', {}));
      expect(o.before.decision, `page ${n}`).toBe('execute');
      expect(s.when(result(`p${n}`, raw(page), json(page))).after.decision).toBe('continue');
    }
  });

  it('but a "next page" past the end, answering the same but for its fetch time, is stopped at the third', () => {
    const s = given(start());
    for (let n = 1; n <= 2; n++) {
      const page = `No more results (fetched 10:1${n}:05)`;
      s.given(step(`p${n}`, 'mail_next_page', {}, raw(page), json(page)));
    }
    expect(s.when(call('p3', 'mail_next_page', {})).before.rule).toBe('exact_repeat');
  });

  it('repeated reads with nothing new advance no_progress; a distinct acknowledged change resets it', () => {
    const s = given(start({ noProgressLimit: 5 }));
    const reads = [
      ['cat parser.py', '# parser.py\ndef parse(): return 1'],
      ['cat loader.py', '# loader.py\ndef load(): return 2'],
    ] as const;
    for (const [cmd, out] of reads) s.given(step(`r-${cmd}`, 'bash', { command: cmd }, raw(out), json(out)));
    s.given(step('again-b', 'bash', { command: 'cat loader.py' }, raw(reads[1][1]), json(reads[1][1])));
    s.given(step('again-a', 'bash', { command: 'cat parser.py' }, raw(reads[0][1]), json(reads[0][1])));
    expect(s.state.noProgress).toBe(2);
    s.given(step('edit', 'bash', { command: "sed -i 's/1/3/' parser.py" }, 'empty', json('')));
    expect(s.state.noProgress).toBe(0);
  });

  it("the caller's progress version stays the authority: acknowledged distinct calls under an unmoved version still count", () => {
    const s = given(start({ noProgressLimit: 3 }));
    const decisions: string[] = [];
    for (let i = 0; i < 4; i++) {
      s.given(call(`w${i}`, 'append_file', { path: 'a', text: `part ${i}` }, { progressVersion: 1 }));
      decisions.push(s.when(result(`w${i}`, 'ok', { ...json('ok'), progressVersion: 1 })).after.decision);
    }
    expect(decisions).toEqual(['continue', 'continue', 'continue', 'stop']);
  });
});

describe('what counts as a failure', () => {
  it.each([
    ['a caller-reported class', 'FATAL', '"x"'],
    ['an envelope with an error', 'SUCCESS', JSON.stringify({ ok: false, error: { message: 'quota' } })],
    [
      'a non-zero exit status in an envelope',
      'SUCCESS',
      JSON.stringify({ exit_code: 2, stdout: 'x', stderr: '' }),
    ],
    [
      'a non-zero exit status in markup',
      'SUCCESS',
      JSON.stringify('<returncode>1</returncode><output>F</output>'),
    ],
    ['a runtime marker', 'SUCCESS', JSON.stringify('Traceback (most recent call last):\n KeyError: 1')],
    ['an error at the start', 'SUCCESS', JSON.stringify('Error: sender address is not verified')],
  ])('%s is a failure', (_, kind, resultJson) => {
    expect(isFailedResult(kind, resultJson)).toBe(true);
  });

  it.each([
    ['an empty error member (a ToolBench envelope)', JSON.stringify({ error: '', response: 'rows' })],
    ['exit status 0 in markup', JSON.stringify('<returncode>0</returncode><output>ok</output>')],
    ['prose that mentions an error', JSON.stringify('The error bars in figure 2 are small.')],
    ['a search that found nothing', JSON.stringify('No flights found for that day')],
  ])('%s is not', (_, resultJson) => {
    expect(isFailedResult('SUCCESS', resultJson)).toBe(false);
  });
});
