import type { Io } from '../../src/cli/io.js';

/** An Io that keeps what a command wrote, for end-to-end CLI tests. */
export function captureIo(): Io & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return {
    isTty: false,
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t.endsWith('\n') ? t : `${t}\n`;
    },
    stdout: () => out,
    stderr: () => err,
  };
}
