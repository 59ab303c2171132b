/**
 * Where a requests partition's newest snapshot is, kept as the metadata of the group's committed
 * offset for that partition. The worker writes the snapshot and commits the offset with this
 * pointer in one Kafka transaction, so the pointer a takeover reads always names a snapshot
 * committed with exactly the requests it reflects; every later commit carries it on.
 *
 * Short text (offset metadata is limited to 4096 bytes by default), versioned so a worker that
 * does not know a newer form reads "no snapshot" and folds the partition instead.
 */
export interface SnapshotPointer {
  readonly id: string;
  /** Offsets of the first and last piece in the snapshots topic (partition 0). */
  readonly from: number;
  readonly to: number;
  readonly pieces: number;
}

const VERSION = 'lg-snapshot/1';

export function pointerMetadata(p: SnapshotPointer | null): string | null {
  return p === null ? null : `${VERSION} ${p.from} ${p.to} ${p.pieces} ${p.id}`;
}

/** The pointer in committed offset metadata; null for none, another form, or anything malformed. */
export function parsePointer(metadata: string | null | undefined): SnapshotPointer | null {
  const parts = metadata?.split(' ') ?? [];
  if (parts.length !== 5 || parts[0] !== VERSION) return null;
  const [from, to, pieces] = parts.slice(1, 4).map(Number) as [number, number, number];
  const id = parts[4] as string;
  const offset = (n: number) => Number.isSafeInteger(n) && n >= 0;
  if (!offset(from) || !offset(to) || to < from || !Number.isSafeInteger(pieces) || pieces < 1) return null;
  if (id === '' || pieces > to - from + 1) return null;
  return { id, from, to, pieces };
}
