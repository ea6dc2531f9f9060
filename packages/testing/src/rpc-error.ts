import { AppError } from '@whetstone/errors';

/** The typed error a call failed with: fails the test if the call succeeded or its error lost its type. */
export async function rpcError(call: Promise<unknown>): Promise<AppError> {
  const err = await call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw err;
  return err;
}
