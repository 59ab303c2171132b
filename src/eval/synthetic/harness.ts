import { createHash } from 'node:crypto';
import type { TraceCall, TraceRun } from '../../trace/trace-run.js';

/**
 * How a coding-agent harness shows its tools to the model. The same agent behaviour recorded
 * through different harnesses differs only in wording: a guard tuned on one must hold on the rest.
 */
export interface Harness {
  readonly name: string;
  /** The tool and arguments for a shell command. */
  shell(command: string): { tool: string; args: Record<string, unknown> };
  /** The tool and arguments for writing a whole file. */
  write(path: string, body: string): { tool: string; args: Record<string, unknown> };
  /** A shell command's output as the harness wraps it. */
  output(text: string, code?: number): string;
  /** What the harness answers to a file write. */
  readonly written: string;
}

export const HARNESSES: readonly Harness[] = [
  {
    // Every action is a shell command; empty output still comes back wrapped.
    name: 'shell-only',
    shell: (command) => ({ tool: 'bash', args: { command } }),
    write: (path, body) => ({ tool: 'bash', args: { command: `cat <<'EOF' > ${path}\n${body}\nEOF` } }),
    output: (text, code = 0) => `<returncode>${code}</returncode>\n<output>\n${text}</output>`,
    written: '<returncode>0</returncode>\n<output>\n</output>',
  },
  {
    name: 'editor-tools',
    shell: (command) => ({ tool: 'run_command', args: { cmd: command, timeout: 120 } }),
    write: (path, content) => ({ tool: 'write_file', args: { path, content } }),
    output: (text, code = 0) => (code === 0 ? text || '(no output)' : `exit code ${code}\n${text}`),
    written: 'File written successfully.',
  },
  {
    name: 'json-exec',
    shell: (command) => ({ tool: 'execute', args: { command, cwd: '/workspace' } }),
    write: (path, content) => ({ tool: 'create_file', args: { file_path: path, file_text: content } }),
    output: (text, code = 0) => JSON.stringify({ exit_code: code, stdout: text, stderr: '' }),
    written: JSON.stringify({ status: 'created', bytes_written: null }),
  },
];

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The `step`th call of a synthetic run as a trace file records it (the first 600 chars, the full hash). */
export const tracedCall = (
  step: number,
  tool: string,
  args: Record<string, unknown>,
  result: string,
): TraceCall => ({
  step,
  tool,
  args,
  result: result.slice(0, 600),
  result_sha256: sha256(result),
  result_len: result.length,
  after_user_turn: step === 0,
});

/** A synthetic run as a trace file records it: a working run succeeds (`done` says how), a stuck one gives up. */
export function syntheticRun(runId: string, calls: TraceCall[], success: boolean, done: string): TraceRun {
  return {
    run_id: runId,
    source: 'synthetic',
    outcome: { success, detail: success ? done : 'gave up' },
    calls,
  };
}

/** Builds one run's calls in order, in the trace format. */
export class CallLog {
  readonly calls: TraceCall[] = [];

  constructor(readonly harness: Harness) {}

  private add(tool: string, args: Record<string, unknown>, result: string): void {
    this.calls.push(tracedCall(this.calls.length, tool, args, result));
  }

  shell(command: string, out: string, code = 0): void {
    const { tool, args } = this.harness.shell(command);
    this.add(tool, args, this.harness.output(out, code));
  }

  /** An edit made by a shell command that prints nothing (`sed -i`, `mv`, `git apply`). */
  quiet(command: string): void {
    this.shell(command, '');
  }

  write(path: string, body: string): void {
    const { tool, args } = this.harness.write(path, body);
    this.add(tool, args, this.harness.written);
  }

  get length(): number {
    return this.calls.length;
  }
}
