/** Where a job's files go under its artifact prefix (the orchestrator rejects keys outside it). */
export const checkpointKey = (prefix: string, checkpointId: string) =>
  `${prefix}checkpoints/${checkpointId.replace('/', '-')}.ckpt`;
export const bundleKey = (prefix: string) => `${prefix}model.bundle`;
/** The bundle's manifest as JSON, so nothing else needs to open the bundle to describe it. */
export const manifestKey = (prefix: string) => `${prefix}manifest.json`;

/** The last two path parts of a key, e.g. checkpoints/weights-120.ckpt, for log lines. */
export const shortKey = (key: string) => key.split('/').slice(-2).join('/');
