import { describe, expect, it } from 'vitest';
import { call, given, result, start, step } from './support/given.js';

/**
 * Given/when/then for what counts as an acknowledgement (a content-free answer: the world may have
 * changed) and what is only a read that told nothing new (a substantive answer a second, different
 * call got too). Issue 24: acknowledgements of distinct world-changing calls reset the no-progress
 * and repeated-failure counts; repeated reads with nothing new do not.
 */
const json = (text: string) => ({ resultJson: JSON.stringify(text) });
const raw = (text: string) => `raw:${text}`;

/** A long answer (a file's contents): what two different ways of reading it both return. */
const CONFIG = [
  '# deploy.yaml',
  'service: mailer',
  'region: eu-west-1',
  'sender: noreply@example.com',
  'retries: 3',
  'queue: outbound-mail',
  'templates:',
  '  - welcome',
  '  - invoice',
  '  - reminder',
  'limits:',
  '  per_minute: 60',
  '  per_day: 5000',
  'owner: platform-team',
  'notes: the sender address must be verified before the first send',
].join('\n');

const refused = (i: number) => `Error: sender address is not verified (request id ${1000 + i})`;
const send = (id: string, to: string, i: number) =>
  step(id, 'send_email', { to, subject: `report ${i}` }, raw(refused(i)), json(refused(i)));

describe('a substantive answer that a second, different call gets too is nothing new', () => {
  it('given the same failure twice, and between them a file read again another way (same contents), when the failure comes back a third time, then the run stops (repeated_failure)', () => {
    const s = given(
      start(),
      step('read', 'read_file', { path: 'deploy.yaml' }, raw(CONFIG), json(CONFIG)),
      send('m1', 'ana@example.com', 1),
      send('m2', 'bo@example.com', 2),
      step('cat', 'bash', { command: 'cat deploy.yaml' }, raw(CONFIG), json(CONFIG)),
    );
    s.given(call('m3', 'send_email', { to: 'chen@example.com', subject: 'report 3' }));
    const o = s.when(result('m3', raw(refused(3)), json(refused(3))));
    expect(o.after).toMatchObject({ decision: 'stop', rule: 'repeated_failure' });
    expect(o.after.evidence.counts).toEqual({ sameFailure: 3 });
    expect(o.after.message).toContain('calls m1 -> ');
  });

  it('but a distinct call acknowledged with nothing in the same place may have changed the world: the count starts over', () => {
    const s = given(
      start(),
      step('read', 'read_file', { path: 'deploy.yaml' }, raw(CONFIG), json(CONFIG)),
      send('m1', 'ana@example.com', 1),
      send('m2', 'bo@example.com', 2),
      step(
        'verify',
        'bash',
        { command: 'mailctl verify noreply@example.com' },
        'empty',
        json('<returncode>0</returncode><output></output>'),
      ),
    );
    s.given(call('m3', 'send_email', { to: 'chen@example.com', subject: 'report 3' }));
    expect(s.when(result('m3', raw(refused(3)), json(refused(3)))).after.decision).toBe('continue');
  });

  it('given reads re-checked with nothing new, when a different call returns contents already read, then later re-checks still advance no_progress', () => {
    const s = given(start({ noProgressLimit: 20 }));
    const reads = [
      ['cat parser.py', `# parser.py\n${'def parse(): return 1\n'.repeat(14)}`],
      ['cat loader.py', `# loader.py\n${'def load(): return 2\n'.repeat(14)}`],
      ['cat writer.py', `# writer.py\n${'def write(): return 3\n'.repeat(14)}`],
    ] as const;
    const read = (id: string, i: number) => {
      const [command, out] = reads[i] ?? reads[0];
      return step(id, 'bash', { command }, raw(out), json(out));
    };
    s.given(read('a1', 0), read('b1', 1), read('c1', 2), read('a2', 0));
    expect(s.state.noProgress).toBe(1);
    // The same contents by another tool: an answer new for that call, but no change of the world.
    const [, parser] = reads[0];
    s.given(step('open', 'read_file', { path: 'parser.py' }, raw(parser), json(parser)));
    expect(s.state.noProgress).toBe(0);
    s.given(read('b2', 1), read('c2', 2));
    expect(s.state.noProgress).toBe(2);
  });

  it('while a distinct acknowledged edit in the same place lets the re-checks count as progress', () => {
    const s = given(start({ noProgressLimit: 20 }));
    const out = (name: string) => `# ${name}\n${`def ${name}(): pass\n`.repeat(16)}`;
    for (const [id, name] of [
      ['a1', 'parser'],
      ['b1', 'loader'],
      ['a2', 'parser'],
    ] as const)
      s.given(step(id, 'bash', { command: `cat ${name}.py` }, raw(out(name)), json(out(name))));
    s.given(step('edit', 'bash', { command: "sed -i 's/pass/return 1/' parser.py" }, 'empty', json('')));
    s.given(step('b2', 'bash', { command: 'cat loader.py' }, raw(out('loader')), json(out('loader'))));
    expect(s.state.noProgress).toBe(0);
  });
});
