import express, { type Express, type Request, type RequestHandler } from 'express';
import type { Logger } from '@whetstone/telemetry';
import type { Registry } from 'prom-client';
import { AuthCache, type Invalidation } from './application/auth-cache';
import type { AdaptivePort } from './application/adaptive-ports';
import type { ConversationsPort, HistoryPort } from './application/history-ports';
import type { ChatBatches, DatasetsPort, FilesPort, Inference, KeyBilling, TrainingPort } from './application/ports';
import type { RateLimiter, RateLimitSettings } from './domain/rate-limit';
import { Api, type AuthMode } from './transport/http/api';
import { authenticate, presentedKey } from './transport/http/auth';
import { dashboardRouter } from './transport/http/dashboard';
import { errorHandler, notFound } from './transport/http/errors';
import { httpMetrics } from './transport/http/metrics';
import { endpointLimit, loginLimit, preAuthLimit } from './transport/http/rate-limit';
import { checkRequestLine } from './transport/http/validate';
import { registerAccountRoutes } from './transport/http/routes/account.routes';
import { registerInferenceRoutes } from './transport/http/routes/inference.routes';
import { registerMessageBatchRoutes } from './transport/http/routes/compat/message-batches.routes';
import { batchFiles, registerFileRoutes } from './transport/http/routes/compat/files.routes';
import { registerConversationRoutes } from './transport/http/routes/compat/conversations.routes';
import { registerFineTuningRoutes } from './transport/http/routes/compat/fine-tuning.routes';
import { fineTuningResultFiles } from './transport/http/routes/compat/fine-tuning';
import { registerOpenAiBatchRoutes } from './transport/http/routes/compat/openai-batches.routes';
import { registerDatasetRoutes } from './transport/http/routes/datasets.routes';
import { registerHistoryRoutes } from './transport/http/routes/history.routes';
import { registerAdaptiveRoutes } from './transport/http/routes/adaptive.routes';
import { registerJudgeRoutes } from './transport/http/routes/judge.routes';
import { registerTrainingRoutes } from './transport/http/routes/training.routes';

export interface GatewayDeps {
  logger: Logger;
  keyBilling: KeyBilling;
  /** The inference-router; its routes are mounted only when it is configured. */
  inference?: Inference;
  /** The router's message batches; mounted with the inference routes. */
  chatBatches?: ChatBatches;
  /** The dataset service; its routes are mounted only when it is configured. */
  datasets?: DatasetsPort;
  /** The OpenAI Files API's files (the dataset service); mounted with it. */
  files?: FilesPort;
  /** The training-orchestrator; training routes are mounted only when it is configured. */
  training?: TrainingPort;
  /** inference-history; the inference history and feedback routes are mounted only when it is configured. */
  history?: HistoryPort;
  /** OpenAI's conversations (inference-history); mounted with it. */
  conversations?: ConversationsPort;
  /** Adaptive inference (the training-orchestrator); its routes are mounted only when it is configured. */
  adaptive?: AdaptivePort;
  rateLimiter: RateLimiter;
  rateLimits: RateLimitSettings;
  authCache: AuthCache;
  broadcast: (invalidation: Invalidation) => Promise<void>;
  /** Whether the shared Redis is connected (reported by /readyz); undefined without Redis. */
  redisUp?: () => boolean | undefined;
  metrics: Registry;
  trustProxy: string;
  publicBaseUrl: string;
  maxJsonBodyBytes: number;
  /** Largest body `POST /v1/messages/batches` accepts (413 above it). */
  maxBatchBodyBytes: number;
  /** Largest file `POST /v1/files` accepts (413 above it). */
  maxFileBytes: number;
  sessionCookie: string;
  /** Serves the filesystem store's signed URLs (embedded default); absent with S3. */
  blobHandler?: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;
  now?: () => number;
  /** Routes a caller (or a test) mounts before the 404 handler, e.g. blob URLs. */
  extraRoutes?: (app: Express, api: Api, chain: (auth: AuthMode) => RequestHandler[]) => void;
}

/** The gateway's HTTP app: no I/O at construction; main.ts listens. */
export function buildApp(deps: GatewayDeps): { app: Express; api: Api } {
  const now = deps.now ?? Date.now;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', parseTrustProxy(deps.trustProxy));
  app.set('query parser', 'simple');

  app.use(httpMetrics(deps.metrics));
  app.get('/livez', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', readiness(deps));
  app.get('/metrics', async (_req, res) => {
    res.type(deps.metrics.contentType).send(await deps.metrics.metrics());
  });

  app.use(preAuthLimit(deps.rateLimiter, deps.rateLimits, now, (req) => keyIsCached(deps.authCache, req, now())));
  app.use(checkRequestLine);
  // Signed blob URLs stream straight to storage: mounted before any body parser.
  if (deps.blobHandler) {
    const blobs = deps.blobHandler;
    app.all(/^\/blobs\/.+/, (req, res) => blobs(req, res));
  }
  const jsonTypes = ['application/json', 'application/*+json'];
  // A message batch is many requests in one body: its own, larger limit (the global parser then skips the body).
  app.post('/v1/messages/batches', express.json({ limit: deps.maxBatchBodyBytes, type: jsonTypes }));
  app.use(express.json({ limit: deps.maxJsonBodyBytes, type: jsonTypes }));

  const authDeps = { keyBilling: deps.keyBilling, cache: deps.authCache, sessionCookie: deps.sessionCookie, now };
  const limit = endpointLimit(deps.rateLimiter, deps.rateLimits, now);
  const publicOrigin = new URL(deps.publicBaseUrl).origin;
  const chain = (auth: AuthMode): RequestHandler[] =>
    auth === 'none'
      ? [limit]
      : [authenticate(authDeps, { key: auth !== 'session', session: auth !== 'key', publicOrigin }), limit];

  const api = new Api(chain);
  registerAccountRoutes(api, {
    keyBilling: deps.keyBilling,
    cache: deps.authCache,
    broadcast: deps.broadcast,
    sessionCookie: deps.sessionCookie,
    secureCookies: deps.publicBaseUrl.startsWith('https:'),
    loginAttempt: loginLimit(deps.rateLimiter, deps.rateLimits, now),
  });
  if (deps.inference)
    registerInferenceRoutes(api, deps.inference, {
      history: deps.history,
      batches: deps.chatBatches,
      conversations: deps.conversations,
    });
  if (deps.conversations) registerConversationRoutes(api, deps.conversations);
  if (deps.chatBatches) registerMessageBatchRoutes(api, deps.chatBatches, deps.publicBaseUrl);
  if (deps.files) {
    const derived = [
      ...(deps.chatBatches ? [batchFiles(deps.chatBatches)] : []),
      ...(deps.training ? [fineTuningResultFiles(deps.training)] : []),
    ];
    registerFileRoutes(api, deps.files, derived, deps.maxFileBytes);
  }
  if (deps.files && deps.chatBatches) registerOpenAiBatchRoutes(api, deps.chatBatches, deps.files);
  if (deps.files && deps.datasets && deps.training)
    registerFineTuningRoutes(api, { training: deps.training, datasets: deps.datasets, files: deps.files });
  if (deps.datasets) registerDatasetRoutes(api, deps.datasets);
  if (deps.training) registerTrainingRoutes(api, deps.training, deps.inference);
  if (deps.history) registerHistoryRoutes(api, deps.history);
  if (deps.history && deps.inference) registerJudgeRoutes(api, deps.history, deps.inference);
  if (deps.adaptive) registerAdaptiveRoutes(api, deps.adaptive);
  deps.extraRoutes?.(app, api, chain);

  const openapi = api.openApiDocument();
  app.get('/openapi.json', (_req, res) => void res.json(openapi));
  app.use(api.router);

  app.use(dashboardRouter());

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return { app, api };
}

/** Whether the request's API key is in the auth cache, so authenticating it costs no I/O. */
function keyIsCached(cache: AuthCache, req: Request, now: number): boolean {
  const secret = presentedKey(req);
  return secret !== undefined && cache.get(AuthCache.fingerprint(secret), now) !== undefined;
}

/**
 * 200 when key-billing answers its health check (every request authenticates there), else 503. The other back
 * ends are reported under `degraded` but do not make the gateway unready: one of them down fails its own routes,
 * and taking every gateway replica out of its Service for it would fail all the others too.
 */
function readiness(deps: GatewayDeps): RequestHandler {
  const others: [string, { ready(): Promise<boolean> } | undefined][] = [
    ['inference-router', deps.inference],
    ['dataset', deps.datasets],
    ['training-orchestrator', deps.training],
    ['inference-history', deps.history],
  ];
  const up = (port: { ready(): Promise<boolean> } | undefined) =>
    port ? port.ready().catch(() => false) : Promise.resolve(true);
  return async (_req, res) => {
    const [billing, ...rest] = await Promise.all([up(deps.keyBilling), ...others.map(([, port]) => up(port))]);
    const degraded = others.filter((_, i) => !rest[i]).map(([name]) => name);
    // Reported, not required: without Redis the gateway limits in-process and still serves.
    const redisUp = deps.redisUp?.();
    const redis = redisUp === undefined ? {} : { redis: redisUp ? 'up' : 'down' };
    if (!billing) {
      res.status(503).json({ detail: `not reachable: ${['key-billing', ...degraded].join(', ')}`, ...redis });
      return;
    }
    res.status(200).json({ status: 'ready', ...(degraded.length ? { degraded } : {}), ...redis });
  };
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
