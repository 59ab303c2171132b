import { describe, expect, it } from 'vitest';
import { REVISIT_LIMIT } from '../src/domain/news.js';
import { call, given, result, start, step } from './support/given.js';

/** Given/when/then for what counts as progress: the caller's version, flips, costs charged. */

const json = (text: string) => ({ resultJson: JSON.stringify(text) });

describe("the caller's progress version is the authority for no_progress", () => {
  it('given a version that never moves, when tools keep answering new things, then the run stops at noProgressLimit (the divergent loop)', () => {
    const s = given(
      start({ noProgressLimit: 3 }),
      step('c1', 'search', { q: 'a' }, 'r1', { progressVersion: 1 }, { progressVersion: 1 }),
      step('c2', 'browse', { url: 'b' }, 'r2', { progressVersion: 1 }, { progressVersion: 1 }),
      step('c3', 'lookup', { id: 'c' }, 'r3', { progressVersion: 1 }, { progressVersion: 1 }),
    );
    s.given(call('c4', 'fetch', { u: 'd' }, { progressVersion: 1 }));
    const o = s.when(result('c4', 'r4', { progressVersion: 1 }));
    expect(o.after).toMatchObject({ decision: 'stop', rule: 'no_progress' });
    expect(o.after.evidence.counts).toEqual({ noProgress: 3 });
    expect(o.after.message).toContain('progress version');
    expect(o.report).toMatchObject({ terminalState: 'STOPPED_LOOP_GUARD', guardReason: 'no_progress' });
  });

  it('given the first call raised the version, then it and only it counts as progress', () => {
    const s = given(
      start({ noProgressLimit: 3 }),
      step('c1', 'search', { q: 'a' }, 'r1', { progressVersion: 1 }),
      step('c2', 'browse', { url: 'b' }, 'r2', { progressVersion: 1 }),
      step('c3', 'lookup', { id: 'c' }, 'r3', { progressVersion: 1 }),
    );
    expect(s.state.noProgress).toBe(2);
    const o = s.given(call('c4', 'fetch', {})).when(result('c4', 'r4', { progressVersion: 2 }));
    expect(o.after).toMatchObject({ decision: 'continue', rule: null });
    expect(o.state.noProgress).toBe(0);
  });

  it('given no progress version at all, when every call answers something new, then nothing stops it (novelty is the signal)', () => {
    const s = given(start({ noProgressLimit: 3 }));
    for (let i = 0; i < 10; i++) {
      s.given(call(`c${i}`, `tool${i % 4}`, { i }));
      expect(s.when(result(`c${i}`, `r${i}`)).after.decision).toBe('continue');
    }
  });

  it('a user turn is still news under a tracked version', () => {
    const s = given(
      start({ noProgressLimit: 2 }),
      step('c1', 'a', {}, 'r1', { progressVersion: 1 }),
      step('c2', 'b', {}, 'r2', { progressVersion: 1 }),
    );
    expect(s.state.noProgress).toBe(1);
    s.given(call('c3', 'c', {}, { afterUserTurn: true }));
    expect(s.when(result('c3', 'r3', { progressVersion: 1 })).state.noProgress).toBe(0);
  });
});

describe('a question answered differently from last time is news', () => {
  it('given an edit and a test, when a revert makes the test fail the old way again, then that is not a loop', () => {
    const s = given(
      start(),
      step('e1', 'bash', { cmd: "sed -i 's/a/b/' f.py" }, 'empty', json('')),
      step('t1', 'bash', { cmd: 'pytest t.py' }, 'fails-A', json('F fails A')),
      step('e2', 'bash', { cmd: "sed -i 's/b/a/' f.py" }, 'empty', json('')),
      step('t2', 'bash', { cmd: 'pytest t.py' }, 'fails-B', json('F fails B')),
      step('e3', 'bash', { cmd: "sed -i 's/a/b/' f.py" }, 'empty', json('')),
    );
    s.given(call('t3', 'bash', { cmd: 'pytest t.py' }));
    const o = s.when(result('t3', 'fails-A', json('F fails A')));
    expect(o.after).toMatchObject({ decision: 'continue', rule: null });
    expect(o.state.noProgress).toBe(0);
    expect(o.state.revisits).toBe(1);
  });

  it('given an agent that only toggles between two known states, then it is stopped once the revisits run out', () => {
    const s = given(start({ noProgressLimit: 3 }));
    const toggle = ["sed -i 's/a/b/' f.py", "sed -i 's/b/a/' f.py"];
    let stopped: string | null = null;
    let calls = 0;
    for (let i = 0; i < 20 && stopped === null; i++) {
      for (const [id, cmd, hash] of [
        [`e${i}`, toggle[i % 2], 'empty'],
        [`t${i}`, 'pytest t.py', i % 2 === 0 ? 'fails-A' : 'fails-B'],
      ] as const) {
        const before = s.when(call(id, 'bash', { cmd }));
        if (before.before.decision !== 'execute') {
          stopped = before.before.rule;
          break;
        }
        calls++;
        const after = s.when(result(id, hash, json(hash)));
        if (after.after.decision === 'stop') {
          stopped = after.after.rule;
          break;
        }
      }
    }
    expect(stopped).not.toBeNull();
    // Two calls per toggle: the first round is new, then REVISIT_LIMIT flips count as progress.
    expect(calls).toBeGreaterThan(2 * (REVISIT_LIMIT / 2 + 1));
    expect(calls).toBeLessThanOrEqual(4 + 2 * REVISIT_LIMIT + 3);
  });
});

describe('checks after a change are news', () => {
  const checks = [
    ['git status --short', 'status', ' M src/app.py'],
    ['grep -rn parse_value src', 'grep', 'src/app.py:3: parse_value'],
    ['cat -n src/app.py', 'cat', '1 def parse_value(v): ...'],
    ['pytest tests/test_app.py', 'test', 'F test_app: AssertionError'],
  ] as const;

  it('given an edit, when status, grep, the file and the test all answer what they did before it, then that is not a lack of progress', () => {
    const s = given(start({ noProgressLimit: 3 }));
    for (const [cmd, h, out] of checks) s.given(step(`first-${h}`, 'bash', { cmd }, h, json(out)));
    for (let i = 0; i < 5; i++) {
      s.given(step(`e${i}`, 'bash', { cmd: `sed -i '${i + 3}s/a/b/' src/app.py` }, 'empty', json('')));
      for (const [cmd, h, out] of checks) {
        s.given(call(`${h}${i}`, 'bash', { cmd }));
        const o = s.when(result(`${h}${i}`, h, json(out)));
        expect(o.after.decision, `${h} after edit ${i}`).toBe('continue');
      }
    }
  });

  it('but the same checks again, with no change in between, are stopped at noProgressLimit', () => {
    // Checks whose answers are about what they ask: none of them can have changed anything.
    const reads = checks.filter(([, h]) => h !== 'cat');
    const s = given(start({ noProgressLimit: 3 }));
    for (const [cmd, h, out] of reads) s.given(step(`first-${h}`, 'bash', { cmd }, h, json(out)));
    const decisions: string[] = [];
    // In another order: the same order again would be a cycle, which short_cycle stops sooner.
    for (const [cmd, h, out] of [...reads].reverse()) {
      s.given(call(`again-${h}`, 'bash', { cmd }));
      decisions.push(s.when(result(`again-${h}`, h, json(out))).after.decision);
    }
    expect(decisions).toEqual(['continue', 'continue', 'stop']);
  });

  it('and A, B, A, B where B answered nothing still goes round: the cycle is stopped', () => {
    const s = given(
      start(),
      step('a1', 'api', { q: 'a' }, 'ra', json('a result about a')),
      step('b1', 'api', { q: 'b' }, 'empty', json('')),
      step('a2', 'api', { q: 'a' }, 'ra', json('a result about a')),
    );
    expect(s.when(call('b2', 'api', { q: 'b' })).before).toMatchObject({
      decision: 'stop_partial',
      rule: 'short_cycle',
    });
  });
});

describe('informativeness judged without the wording', () => {
  const boilerplate = '<returncode>0</returncode>\n<output>\n</output>';

  it('an empty output in a harness wrapper or envelope says nothing', () => {
    const s = given(start());
    s.given(call('c1', 'bash', { command: "sed -i 's/x/y/' a.py" }));
    expect(s.when(result('c1', 'b', json(boilerplate))).of('ToolCallCompleted')[0]?.informative).toBe(false);
    s.given(call('c2', 'exec', { command: 'mkdir -p out' }));
    const envelope = JSON.stringify({ exit_code: 0, stdout: '', stderr: '' });
    expect(s.when(result('c2', 'e', json(envelope))).of('ToolCallCompleted')[0]?.informative).toBe(false);
  });

  it('a short answer that shares no word with what was asked is about the harness, not the ask', () => {
    const s = given(start());
    s.given(call('c1', 'write_file', { path: 'check_a.py', content: 'print(parse("1"))' }));
    const written = s.when(result('c1', 'w', json('File written successfully.')));
    expect(written.of('ToolCallCompleted')[0]).toMatchObject({ informative: true, answersAsk: false });
    s.given(call('c2', 'bash', { command: 'grep -rn parse_value src' }));
    const found = s.when(result('c2', 'g', json('src/pkg/x.py:42: def parse_value(v):')));
    expect(found.of('ToolCallCompleted')[0]).toMatchObject({ informative: true, answersAsk: true });
  });

  it('given similar writes that each get the same acknowledgement, then they are never stopped as near-duplicates', () => {
    const s = given(start());
    for (let i = 0; i < 8; i++) {
      const o = s.when(
        call(`w${i}`, 'write_file', { path: 'src/app.py', content: `def f(v):\n    return v + ${i}\n` }),
      );
      expect(o.before.decision, `write ${i}`).toBe('execute');
      s.given(result(`w${i}`, 'ack', json('File written successfully.')));
    }
  });

  it('given an answer two unrelated calls returned alike, then rephrasings that get it are not a near-duplicate loop', () => {
    const s = given(
      start(),
      step(
        'u1',
        'search',
        { q: 'weather in paris tomorrow' },
        'same',
        json('Status: accepted, request queued'),
      ),
      step('u2', 'search', { q: 'stock price of acme' }, 'same', json('Status: accepted, request queued')),
    );
    for (let i = 0; i < 5; i++) {
      const o = s.when(call(`r${i}`, 'search', { q: `stock price of acme ${'!'.repeat(i + 1)}` }));
      expect(o.before.decision, `rephrase ${i}`).toBe('execute');
      s.given(result(`r${i}`, 'same', json('Status: accepted, request queued')));
    }
  });

  it('given a run of similar `sed -i` edits each answered with the wrapped empty output, then none is refused', () => {
    const s = given(start());
    for (let i = 0; i < 8; i++) {
      const o = s.when(
        call(`e${i}`, 'bash', {
          command: `sed -i '${10 + i}s/value.a${i}/value.get("a${i}")/' src/pkg/parser.py`,
        }),
      );
      expect(o.before.decision, `edit ${i}`).toBe('execute');
      s.given(result(`e${i}`, 'wrapped-empty', json(boilerplate)));
    }
  });

  it('given similar scratch scripts whose runs answer differently, then writing the next one is not a rephrasing', () => {
    const s = given(start());
    for (let i = 0; i < 6; i++) {
      const body = `from pkg.parser import parse_value\nprint(parse_value(${i}))\n`;
      const w = s.when(call(`w${i}`, 'write_file', { path: `check_${i}.py`, content: body }));
      expect(w.before.decision, `write ${i}`).toBe('execute');
      // One answer for every write, and it says something about the ask (it names the module).
      s.given(result(`w${i}`, 'written', json('saved 3 lines (from pkg.parser)')));
      s.given(
        step(
          `r${i}`,
          'bash',
          { command: `python check_${i}.py` },
          `out-${i}`,
          json(`parse_value -> ${i * 7}`),
        ),
      );
    }
  });

  it('but rephrasings that get the same answer only among themselves are still stopped', () => {
    const answer = json('Paris: 18C, light rain, wind 12 km/h');
    const s = given(
      start(),
      step('r1', 'search', { q: 'weather Paris tomorrow' }, 'paris', answer),
      step('r2', 'search', { q: 'weather Paris tomorrow?' }, 'paris', answer),
      step('r3', 'search', { q: 'weather: Paris tomorrow?' }, 'paris', answer),
    );
    const o = s.when(call('r4', 'search', { q: 'weather in Paris tomorrow?' }));
    expect(o.before).toMatchObject({ decision: 'stop_partial', rule: 'near_duplicate' });
  });
});

describe("a tool's cost estimate is charged when the call reports no cost", () => {
  it('given a tool estimated at $0.30 and maxCostUsd 1.0, when it is called six times without reporting cost, then only three run', () => {
    const s = given(start({ maxCostUsd: 1, tools: { render: { costUsd: 0.3 } } }));
    const decisions: string[] = [];
    for (let i = 0; i < 6; i++) {
      const o = s.when(call(`c${i}`, 'render', { page: i }));
      decisions.push(o.before.decision);
      if (o.before.decision !== 'execute') break;
      s.given(result(`c${i}`, `h${i}`));
    }
    expect(decisions).toEqual(['execute', 'execute', 'execute', 'refuse']);
    expect(s.state.costUsd).toBeCloseTo(0.9);
  });

  it("the call's own estimate wins over the policy's, and a reported cost over both", () => {
    const s = given(
      start({ tools: { render: { costUsd: 0.3 } } }),
      step('c1', 'render', { p: 1 }, 'h1', {}, { costEstimateUsd: 0.05 }),
    );
    expect(s.state.costUsd).toBeCloseTo(0.05);
    s.given(step('c2', 'render', { p: 2 }, 'h2', { costUsd: 0.01 }));
    expect(s.state.costUsd).toBeCloseTo(0.06);
    s.given(step('c3', 'other', {}, 'h3'));
    expect(s.state.costUsd).toBeCloseTo(0.06);
  });
});
