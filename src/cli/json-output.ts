import { snakeKeys } from '../domain/snake-keys.js';

/** One `--json` line: the value's field names in snake_case (domain/snake-keys.ts). */
export const jsonLine = (value: unknown): string => `${JSON.stringify(snakeKeys(value))}\n`;
