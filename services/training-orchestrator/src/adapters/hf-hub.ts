import { lookup } from 'node:dns/promises';
import { Agent } from 'undici';
import { publicOnlyLookup } from '@whetstone/config';
import { AppError, Reasons, errors } from '@whetstone/errors';
import type { ModelHub } from '../application/ports';
import { isNonPublicAddress } from '../domain/hub';

/** One commit in the hub's NDJSON form: a header line, then one base64 line per file. */
function commitBody(files: { path: string; bytes: Uint8Array }[], message: string): string {
  const lines = [
    JSON.stringify({ key: 'header', value: { summary: message, description: '' } }),
    ...files.map((f) =>
      JSON.stringify({
        key: 'file',
        value: { path: f.path, encoding: 'base64', content: Buffer.from(f.bytes).toString('base64') },
      }),
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * A Hugging Face-compatible hub over its HTTP API: create the model repo (an
 * existing one is fine), then one commit with the files (base64 in NDJSON).
 * The base URL is the operator's; its addresses are checked on every push, again
 * by every connection as it opens (a name that re-resolves to a private address
 * between the check and the connection is refused too), and redirects are
 * refused, so the orchestrator never reaches private, loopback or link-local
 * targets unless the operator allows them. The token goes in one
 * Authorization header and nowhere else.
 */
export function hfHub(options: { baseUrl: string; allowPrivateNetworks: boolean; timeoutMs?: number }): ModelHub {
  const base = options.baseUrl.replace(/\/+$/, '');
  const pool = new Agent({ connect: { lookup: publicOnlyLookup(() => options.allowPrivateNetworks) } });
  const forbidden = (cause?: unknown) =>
    new AppError(
      'PermissionDenied',
      'HUB_TARGET_FORBIDDEN',
      `The configured model hub resolves to a private, loopback or link-local address; the operator must allow private networks (HUB_ALLOW_PRIVATE_NETWORKS) to push there.`,
      cause === undefined ? {} : { cause },
    );
  const guard = async () => {
    const host = new URL(base).hostname.replace(/^\[|\]$/g, '');
    const addresses = await lookup(host, { all: true }).catch(() => []);
    if (!addresses.length)
      throw errors.unavailable(Reasons.DEPENDENCY_UNAVAILABLE, `The model hub host '${host}' does not resolve.`);
    if (!options.allowPrivateNetworks && addresses.some((a) => isNonPublicAddress(a.address))) throw forbidden();
  };
  const call = async (path: string, init: RequestInit & { token: string }) => {
    const { token, ...rest } = init;
    const res = await fetch(`${base}${path}`, {
      ...rest,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
      dispatcher: pool,
      headers: { ...(rest.headers as Record<string, string>), authorization: `Bearer ${token}` },
    }).catch((cause: unknown) => {
      if ((cause as { cause?: { code?: string } }).cause?.code === 'ENONPUBLIC') throw forbidden(cause);
      // The fetch error's text (addresses, resolver details) stays in the cause, out of the public message.
      throw new AppError('Unavailable', Reasons.DEPENDENCY_UNAVAILABLE, 'The model hub could not be reached.', {
        cause,
      });
    });
    if (res.status >= 300 && res.status < 400)
      throw new AppError(
        'PermissionDenied',
        'HUB_TARGET_FORBIDDEN',
        'The model hub answered with a redirect, which is not followed.',
      );
    if (res.status === 401 || res.status === 403)
      throw errors.invalid(
        Reasons.VALIDATION_FAILED,
        `The hub rejected the token (${res.status}): it needs write access to the repository.`,
        [{ field: 'hub_token', message: `rejected by the hub (${res.status})` }],
      );
    return res;
  };
  return {
    async push({ repoId, token, private: isPrivate, files, message }) {
      await guard();
      const [organization, name] = repoId.split('/') as [string, string];
      const created = await call('/api/repos/create', {
        method: 'POST',
        token,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'model', name, organization, private: isPrivate }),
      });
      if (!created.ok && created.status !== 409)
        throw errors.unavailable(
          Reasons.DEPENDENCY_UNAVAILABLE,
          `The model hub could not create ${repoId} (${created.status}).`,
        );
      const commit = await call(`/api/models/${repoId}/commit/main`, {
        method: 'POST',
        token,
        headers: { 'content-type': 'application/x-ndjson' },
        body: commitBody(files, message),
      });
      if (!commit.ok)
        throw errors.unavailable(
          Reasons.DEPENDENCY_UNAVAILABLE,
          `The model hub refused the upload to ${repoId} (${commit.status}).`,
        );
      const body = (await commit.json().catch(() => ({}))) as { commitOid?: string; commitUrl?: string };
      return { url: `${base}/${repoId}`, commit: body.commitOid ?? '' };
    },
  };
}
