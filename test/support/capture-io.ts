import type { Io } from '../../src/cli/io.js';

/** An Io that keeps what a command wrote, for end-to-end CLI tests; `tty` plays a terminal. */
export function captureIo(
  opts: { tty?: boolean } = {},
): Io & { stdout: () => string; stderr: () => string; statusLine: () => string } {
  let out = '';
  let err = '';
  let status = '';
  return {
    isTty: opts.tty ?? false,
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t.endsWith('\n') ? t : `${t}\n`;
    },
    status: (t) => {
      status += t;
    },
    stdout: () => out,
    stderr: () => err,
    statusLine: () => status,
  };
}
