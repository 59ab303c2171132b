/** Where a command writes: the process's streams, or a buffer in tests. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Rewrites the status line in place (a progress bar): raw, no newline added. */
  status(text: string): void;
  /** Whether a person watches: stdout is a terminal. Progress is drawn only then, never into a pipe. */
  readonly isTty: boolean;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  status: (text) => {
    if (process.stderr.isTTY) process.stderr.write(text);
  },
  isTty: process.stdout.isTTY === true,
};
