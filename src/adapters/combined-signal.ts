/**
 * The signal a guarded tool gets: the guard's step timeout and the caller's own abort, whichever
 * fires first. A framework's abort (a user pressing stop) must reach the tool at once, not after
 * the guard's timeout.
 */
export function combinedSignal(guard: AbortSignal, caller: AbortSignal | undefined): AbortSignal {
  return caller === undefined ? guard : AbortSignal.any([guard, caller]);
}
