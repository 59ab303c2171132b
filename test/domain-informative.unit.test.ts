import { describe, expect, it } from 'vitest';
import { answersAsk, isInformative } from '../src/domain/informative.js';

/** Whether an answer says anything, by its shape and by what it shares with the ask: no wording lists. */
const text = (t: string) => JSON.stringify(t);

describe('isInformative', () => {
  it.each([
    ['an empty string', text('')],
    [
      'an empty output in markup, with its status code',
      text('<returncode>0</returncode>\n<output>\n</output>'),
    ],
    ['a failing empty output in markup', text('<exit_code>1</exit_code><stdout></stdout><stderr> </stderr>')],
    [
      'a JSON envelope with empty text fields',
      text(JSON.stringify({ exit_code: 0, stdout: '', stderr: '' })),
    ],
    ['an envelope as an object', JSON.stringify({ code: 0, out: '  ', err: null })],
    ['a bare status word', text('OK.')],
    ['empty containers', '{}'],
    ['null', 'null'],
  ])('%s says nothing', (_, result) => {
    expect(isInformative(result)).toBe(false);
  });

  it.each([
    ['a number', '42'],
    ['a quoted number in a script output', text("'1'\n")],
    ['output inside markup', text('<returncode>1</returncode>\n<output>\nF 1 failed</output>')],
    ['a JSON value with text', JSON.stringify({ exit_code: 0, stdout: 'src/a.py:3: def f' })],
    ['numbers without text fields', JSON.stringify({ count: 3 })],
    ['a long answer', text(`${'x'.repeat(300)}`)],
  ])('%s says something', (_, result) => {
    expect(isInformative(result)).toBe(true);
  });

  it('a short answer sharing no word with the arguments is about the harness, not the ask', () => {
    const args = JSON.stringify({ path: 'check_a.py', content: 'print(parse_value(1))' });
    expect(answersAsk(text('File written successfully.'), args)).toBe(false);
    expect(answersAsk(text('(no output)'), JSON.stringify({ cmd: "sed -i 's/a/b/' x.py" }))).toBe(false);
    expect(answersAsk(text('parse_value returned 1'), args)).toBe(true);
  });

  it('an answer with no words at all is judged by its shape alone', () => {
    expect(answersAsk(text('1.0\n'), JSON.stringify({ cmd: 'python check_e.py' }))).toBe(true);
  });
});
