/** One timed request per call, for the outage suites: the status (0 when the connection failed), Retry-After and body. */
export interface Outcome {
  route: string;
  sentAt: number;
  doneAt: number;
  status: number;
  retryAfter: string | null;
  body: string;
}

/** JSON calls with an API key that never throw (a refused connection is status 0), plus the suites' two routes. */
export function loadClient(baseUrl: () => string, key: () => string) {
  const call = async (route: string, init: RequestInit, apiKey = key()): Promise<Outcome> => {
    const sentAt = Date.now();
    try {
      const res = await fetch(`${baseUrl()}${route}`, {
        ...init,
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        signal: AbortSignal.timeout(15_000),
      });
      return {
        route,
        sentAt,
        doneAt: Date.now(),
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: await res.text(),
      };
    } catch (err) {
      return { route, sentAt, doneAt: Date.now(), status: 0, retryAfter: null, body: String(err) };
    }
  };
  const infer = () =>
    call('/inference', {
      method: 'POST',
      body: JSON.stringify({
        model_id: 'whetstone-extract-base',
        text: 'Ada Lovelace worked with Charles Babbage in London.',
        schema: { entities: ['person', 'city'] },
      }),
    });
  const listDatasets = () => call('/core/datasets', { method: 'GET' });
  return { call, infer, listDatasets };
}
