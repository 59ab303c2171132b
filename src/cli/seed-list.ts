import { LoopguardError } from '../domain/index.js';

/** More seeds than this is a typo (each seed replays every synthetic family, about a second). */
const MAX_SEEDS = 1000;
const MAX_SEED = 2 ** 32 - 1;

/**
 * `--seeds 11,12,20-29`: seeds and inclusive ranges, comma-separated, in the order given. Each an
 * integer from 0 to 2^32-1 (the generator's state); a seed given twice is refused, since pooling
 * it twice would count its runs twice.
 */
export function parseSeedList(text: string): number[] {
  const bad = (why: string) => new LoopguardError('usage', `--seeds: ${why}, got "${text}"`);
  const seed = (part: string) => {
    if (!/^\d+$/.test(part)) throw bad(`"${part}" is not a seed (an integer >= 0) or a range A-B`);
    const n = Number(part);
    if (n > MAX_SEED) throw bad(`seed ${part} is over ${MAX_SEED}`);
    return n;
  };
  const seeds: number[] = [];
  for (const raw of text.split(',')) {
    const part = raw.trim();
    const range = /^(\d+)\s*-\s*(\d+)$/.exec(part);
    const [from, to] = range ? [seed(range[1] ?? ''), seed(range[2] ?? '')] : [seed(part), seed(part)];
    if (to < from) throw bad(`the range ${part} runs backwards`);
    if (seeds.length + (to - from + 1) > MAX_SEEDS) throw bad(`more than ${MAX_SEEDS} seeds`);
    for (let n = from; n <= to; n++) {
      if (seeds.includes(n)) throw bad(`seed ${n} is given twice`);
      seeds.push(n);
    }
  }
  return seeds;
}
