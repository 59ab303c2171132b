/**
 * The limits every input path shares (CLI traces, the library, policies, the Kafka reader). Each
 * one is a value the encoder and the runtime can honour: past it a value would be rounded, clamped
 * or refused later, after something had already happened.
 */

/** avsc reads longs as JS numbers and refuses any above this, to rule out precision loss. */
export const MAX_LONG = 9_007_199_254_740_990;
/** avsc 5.7.9 zigzag-encodes negatives below -2^52 wrongly (they come back positive). */
export const MIN_LONG = -4_503_599_627_370_496;

/** Node clamps a timer above 2^31-1 ms to 1 ms: a longer step timeout would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;
/** The last instant a JS Date can hold: a later clock reading is not a time. */
export const MAX_TIME_MS = 8_640_000_000_000_000;
/** Tokens of one call or one model turn; summed over a million calls it still fits a long. */
export const MAX_TOKENS = 2_147_483_647;
/** Dollars of one call or one model turn: far above any real one, and its sums stay finite. */
export const MAX_COST_USD = 1_000_000_000;

/** Nesting of arguments and results: deeper is not a tool call, and a recursive walk must stay on the stack. */
export const MAX_DEPTH = 64;
/** Canonical JSON of arguments or a recorded result: an event must fit a Kafka record (1 MB by default). */
export const MAX_JSON_CHARS = 256 * 1024;
/** Run ids, tool names, operation keys, result codes: names, not documents. */
export const MAX_NAME_CHARS = 1024;
/** Free text a caller records (reasons, gaps, details). */
export const MAX_TEXT_CHARS = 16 * 1024;
