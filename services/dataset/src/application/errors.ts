/** The typed errors several use cases raise; their messages are safe to show the team. */
import { Reasons, errors } from '@whetstone/errors';

export function datasetNotFound(name: string) {
  return errors.notFound('DATASET_NOT_FOUND', `Dataset '${name}' was not found.`);
}

export function versionNotFound(name: string, versionNumber: number) {
  return errors.notFound('DATASET_VERSION_NOT_FOUND', `Dataset '${name}' has no version ${versionNumber}.`);
}

export function invalidName(problem: string) {
  return errors.invalid(Reasons.VALIDATION_FAILED, `Invalid dataset name: ${problem}`, [
    { field: 'dataset_name', message: problem },
  ]);
}
