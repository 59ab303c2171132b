/**
 * Child process of the run rows crash test: writes rounds of varied runs through the library, two
 * guards at once, and prints `round <n>` after each, until the parent kills it with SIGKILL.
 * Run: node --import tsx test/run-rows-crash-writer.ts <dir>
 */
import { libraryRuns } from './support/run-rows.js';

const [dir] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: run-rows-crash-writer <dir>');

async function loop(writer: number): Promise<never> {
  for (let n = 0; ; n++) {
    await libraryRuns(dir as string, `w${writer}-${n}-`);
    process.stdout.write(`round ${writer} ${n}\n`);
  }
}

await Promise.all([0, 1].map(loop));
