/** The error envelope rule of docs/api.md (Errors), as the end-to-end suites check it. */
export type Surface = 'generic' | 'openai' | 'anthropic';

const ANTHROPIC_PATHS = ['/v1/messages'];
/** count_tokens and the message batches. */
const ANTHROPIC_PREFIXES = ['/v1/messages/'];
const OPENAI_PATHS = [
  '/v1/chat/completions',
  '/v1/responses',
  '/v1/completions',
  '/v1/files',
  '/v1/batches',
  '/v1/conversations',
  '/v1/embeddings',
];
const OPENAI_PREFIXES = [
  '/v1/responses/',
  '/v1/chat/completions/',
  '/v1/files/',
  '/v1/batches/',
  '/v1/conversations/',
  '/v1/fine_tuning/',
];

/**
 * Which envelope a request's errors use: a compatible surface's route keeps its own (an OpenAI route stays OpenAI's
 * with the Anthropic version header too), and elsewhere that header selects Anthropic's.
 */
export function surfaceOf(pathname: string, headers: Record<string, string> = {}): Surface {
  if (ANTHROPIC_PATHS.includes(pathname) || ANTHROPIC_PREFIXES.some((p) => pathname.startsWith(p))) return 'anthropic';
  // A stored Response or chat completion (GET /v1/responses/:id, /v1/chat/completions/:id) is OpenAI's too.
  if (OPENAI_PATHS.includes(pathname) || OPENAI_PREFIXES.some((p) => pathname.startsWith(p))) return 'openai';
  return 'anthropic-version' in headers ? 'anthropic' : 'generic';
}

/** The message of an error body in the envelope of its path (`detail`, or `error.message`); undefined otherwise. */
export function errorMessageOf(pathname: string, text: string): unknown {
  try {
    const body = JSON.parse(text) as { detail?: unknown; error?: { message?: unknown } };
    return surfaceOf(pathname) === 'generic' ? body.detail : body.error?.message;
  } catch {
    return undefined;
  }
}
