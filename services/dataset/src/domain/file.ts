/** Files API rules: purposes, names, expiry and where the bytes are kept. */

/** The purposes the OpenAI Files API accepts, in its documentation's order. */
export const FILE_PURPOSES = ['batch', 'fine-tune', 'assistants', 'vision', 'user_data', 'evals'] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** Shortest and longest expiry a file may ask for (an hour, 30 days), as OpenAI's `expires_after` allows. */
export const MIN_EXPIRES_AFTER_SECONDS = 3600;
export const MAX_EXPIRES_AFTER_SECONDS = 2_592_000;

/** Largest file accepted unless configured otherwise (FILE_MAX_BYTES): 50 MiB. */
export const DEFAULT_FILE_MAX_BYTES = 50 * 1024 * 1024;

/** Most files one page of ListFiles holds. */
export const MAX_FILES_PAGE = 10_000;

// C0 and C1 controls (newlines, NUL, DEL …): they break headers and logs wherever the name is shown.
const CONTROL = /\p{Cc}/u;

export function isFilePurpose(value: string): value is FilePurpose {
  return (FILE_PURPOSES as readonly string[]).includes(value);
}

/** Null when the name is fine, else what is wrong with it. */
export function filenameProblem(filename: string): string | null {
  const length = [...filename].length;
  if (length < 1 || length > 255) return 'must be 1 to 255 characters';
  if (CONTROL.test(filename)) return 'must not contain control characters';
  if (filename.includes('/')) return 'must not contain "/"';
  return null;
}

/** Null when `seconds` is 0 (kept until deleted) or within the allowed range, else what is wrong with it. */
export function expiryProblem(seconds: number): string | null {
  if (seconds === 0 || (seconds >= MIN_EXPIRES_AFTER_SECONDS && seconds <= MAX_EXPIRES_AFTER_SECONDS)) return null;
  return `must be 0 (never) or ${MIN_EXPIRES_AFTER_SECONDS} to ${MAX_EXPIRES_AFTER_SECONDS} seconds`;
}

/** Where a file's bytes live in the datasets bucket; outside `teams/`, so deleting a dataset never touches them. */
export function fileKey(teamId: string, fileId: string): string {
  return `files/${teamId}/${fileId}`;
}
