/**
 * node:sqlite's ExperimentalWarning (Node 22) is kept off every command's stderr and off the apps
 * that import loopguard; every other warning still reaches them. Node 24 no longer emits it, so
 * the load is played as Node 22 plays it: the module's load emits the warning.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isSqliteExperimentalWarning } from '../src/log/embedded/sqlite.js';

const NOTE = 'SQLite is an experimental feature and might change at any time';

describe('node:sqlite loaded quietly', () => {
  const getBuiltinModule = process.getBuiltinModule;
  afterEach(() => {
    process.getBuiltinModule = getBuiltinModule;
  });

  it("drops that one warning while the module loads, and lets the app's own warnings through", async () => {
    const seen: string[] = [];
    const listen = (w: Error) => seen.push(`${w.name}: ${w.message}`);
    process.on('warning', listen);
    try {
      process.getBuiltinModule = ((id: string) => {
        process.emitWarning(NOTE, 'ExperimentalWarning');
        process.emitWarning('another module is experimental', 'ExperimentalWarning');
        return getBuiltinModule(id);
      }) as typeof process.getBuiltinModule;
      vi.resetModules();
      const { DatabaseSync } = await import('../src/log/embedded/sqlite.js');
      expect(new DatabaseSync(':memory:').prepare('SELECT 1 AS one').get()).toEqual({ one: 1 });
      process.emitWarning(NOTE, 'ExperimentalWarning');
      await new Promise((r) => setImmediate(r));
      // The load's own note is gone; the other warning of the load and the app's later one are not.
      expect(seen).toEqual([
        'ExperimentalWarning: another module is experimental',
        `ExperimentalWarning: ${NOTE}`,
      ]);
    } finally {
      process.off('warning', listen);
    }
  });

  it('tells the note by its type and text, in each form emitWarning takes', () => {
    expect(isSqliteExperimentalWarning(NOTE, ['ExperimentalWarning'])).toBe(true);
    expect(isSqliteExperimentalWarning(NOTE, [{ type: 'ExperimentalWarning' }])).toBe(true);
    const asError = Object.assign(new Error(NOTE), { name: 'ExperimentalWarning' });
    expect(isSqliteExperimentalWarning(asError, [])).toBe(true);
    expect(isSqliteExperimentalWarning(NOTE, ['DeprecationWarning'])).toBe(false);
    expect(isSqliteExperimentalWarning('Fetch is an experimental feature', ['ExperimentalWarning'])).toBe(
      false,
    );
    expect(isSqliteExperimentalWarning(NOTE, [])).toBe(false);
  });
});
