/**
 * A counting fake tool's counter that several processes share: one line appended per execution
 * (O_APPEND writes of a few bytes do not interleave), counted by reading the file. The counter,
 * not a status or an exception, is what the fault tests assert on.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

export function hit(path: string, label = 'x'): void {
  appendFileSync(path, `${process.pid} ${label}\n`);
}

export function count(path: string): number {
  if (!existsSync(path)) return 0;
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0).length;
}
