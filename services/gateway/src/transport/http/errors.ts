import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { AppError, Reasons, toHttpError, type Surface } from '@whetstone/errors';
import type { Logger } from '@whetstone/telemetry';

/** The legacy completions route is OpenAI's too, so its clients parse the same envelope (docs/api.md, Errors). */
const OPENAI_PATHS = new Set([
  '/v1/chat/completions',
  '/v1/responses',
  '/v1/completions',
  '/v1/files',
  '/v1/batches',
  '/v1/conversations',
  '/v1/embeddings',
]);
const OPENAI_PREFIXES = [
  '/v1/responses/',
  '/v1/chat/completions/',
  '/v1/files/',
  '/v1/batches/',
  '/v1/conversations/',
  '/v1/fine_tuning/',
  // OpenAI's APIs that are not served: their clients still get a 404 they parse (docs/api.md, "Not served").
  '/v1/moderations',
  '/v1/webhook_endpoints',
  '/v1/webhook_event_types',
  '/v1/images/',
  '/v1/audio/',
  '/v1/assistants',
  '/v1/threads',
  '/v1/vector_stores',
  '/v1/evals',
  '/v1/uploads',
  '/v1/realtime',
  '/v1/videos',
];
/** Messages clients expect Anthropic-shaped errors even when they leave the version header out. */
const ANTHROPIC_PATHS = new Set(['/v1/messages']);
/** count_tokens and the message batches. */
const ANTHROPIC_PREFIXES = ['/v1/messages/'];

/**
 * Which envelope this request's errors use (spec, Errors: envelope rules): a route of a compatible surface keeps its
 * own (an OpenAI-surface call stays OpenAI's even with the messages contract's version header), and elsewhere that
 * header selects the Messages envelope.
 */
export function surfaceOf(req: Request): Surface {
  return surfaceFor(req.path, req.headers['anthropic-version'] !== undefined);
}

/** `/v1/messages` and the paths below it (count_tokens, the message batches): the only place 529 exists. */
const isMessagesEndpoint = (path: string) =>
  ANTHROPIC_PATHS.has(path) || ANTHROPIC_PREFIXES.some((p) => path.startsWith(p));

/** The envelope of a path's errors (`anthropicVersion`: the request carries `anthropic-version`); /openapi.json uses it too. */
export function surfaceFor(path: string, anthropicVersion: boolean): Surface {
  if (isMessagesEndpoint(path)) return 'anthropic';
  // A stored Response or chat completion (GET /v1/responses/:id, /v1/chat/completions/:id) is OpenAI's too.
  if (OPENAI_PATHS.has(path) || OPENAI_PREFIXES.some((p) => path.startsWith(p))) return 'openai';
  return anthropicVersion ? 'anthropic' : 'generic';
}

export function sendError(req: Request, res: Response, err: unknown): void {
  const { status, headers, body } = toHttpError(err, surfaceOf(req), {
    messagesEndpoint: isMessagesEndpoint(req.path),
  });
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(status).set(headers).json(body);
}

/** Unknown routes: 404 in the request's envelope. */
export const notFound: RequestHandler = (req, res) => {
  sendError(req, res, new AppError('NotFound', Reasons.ROUTE_NOT_FOUND, `No route for ${req.method} ${req.path}`));
};

/**
 * The last middleware: body-parser failures become 400/413, AppErrors use the
 * table, and anything else is a generic 500 whose cause is only logged.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const type = (err as { type?: string } | null)?.type;
    if (type === 'entity.parse.failed') {
      return sendError(req, res, new AppError('Malformed', Reasons.MALFORMED_JSON, 'Request body is not valid JSON'));
    }
    if (type === 'entity.too.large') {
      return sendError(
        req,
        res,
        new AppError(
          'PayloadTooLarge',
          Reasons.PAYLOAD_TOO_LARGE,
          'Request body exceeds the size limit of this endpoint',
        ),
      );
    }
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return sendError(
        req,
        res,
        new AppError('Malformed', Reasons.MALFORMED_JSON, 'Unsupported request body encoding'),
      );
    }
    if (!(err instanceof AppError) || err.kind === 'Internal') {
      logger.error({ err, method: req.method, path: req.path }, 'unhandled error');
    }
    sendError(req, res, err);
  };
}

/**
 * Requests node's HTTP parser refuses before express sees them (a request line
 * or headers over the limit, a malformed header, a timeout) are answered in
 * JSON too, instead of node's bodiless default. The envelope comes from what
 * the parser had read, when that includes the path or the version header.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    // As node's own handler: a keep-alive socket may have served earlier requests; only a response
    // already under way makes it too late to answer.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const error =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('PayloadTooLarge', Reasons.HEADERS_TOO_LARGE, 'Request line and headers exceed the size limit')
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'HPE_HEADER_TIMEOUT'
          ? new AppError('Malformed', Reasons.REQUEST_TIMEOUT, 'The request was not received in time')
          : new AppError('Malformed', Reasons.MALFORMED_PARAMETER, 'Malformed HTTP request');
    const raw = err.rawPacket?.toString('latin1') ?? '';
    const path = /^[A-Z]+ ([^ ?\r\n]*)/.exec(raw)?.[1] ?? '';
    const surface = surfaceFor(path, /\r\nanthropic-version:/i.test(raw));
    const { status, headers, body } = toHttpError(error, surface, { messagesEndpoint: isMessagesEndpoint(path) });
    const json = JSON.stringify(body);
    const head = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(json)}`,
      'Connection: close',
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${json}`);
  });
}
