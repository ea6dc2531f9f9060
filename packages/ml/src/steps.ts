/**
 * Long computations are written as generators that yield every so often; these
 * run one to completion, either in one go or yielding to the event loop at each
 * step (so heartbeats, progress and cancellation stay responsive).
 */
export function runSteps<T>(steps: Generator<void, T, void>): T {
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}

export async function runStepsAsync<T>(steps: Generator<void, T, void>): Promise<T> {
  let r = steps.next();
  while (!r.done) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    r = steps.next();
  }
  return r.value;
}
