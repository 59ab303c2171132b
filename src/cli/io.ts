/** Where a command writes: the process's streams, or a buffer in tests. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  readonly isTty: boolean;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  isTty: process.stdout.isTTY === true,
};
