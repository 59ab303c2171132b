import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.unit.test.ts', 'test/**/*.contract.test.ts', 'test/**/*.e2e.test.ts'],
          // Spawned CLIs, installs and replays of whole trace sets take seconds alone and several
          // times that on a busy CI machine; no test here asserts a duration by its timeout.
          testTimeout: 30_000,
        },
      },
      {
        // Installs every claimed framework version from the registry: minutes, so apart from unit.
        test: {
          name: 'matrix',
          include: ['test/**/*.matrix.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: 'int',
          include: ['test/**/*.int.test.ts'],
          globalSetup: ['test/setup/kafka-global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
