import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { AppError, Reasons, toHttpError, type Surface } from '@whetstone/errors';
import type { Logger } from '@whetstone/telemetry';

/** The legacy completions route is OpenAI's too, so its clients parse the same envelope (docs/api.md, Errors). */
const OPENAI_PATHS = new Set(['/v1/chat/completions', '/v1/responses', '/v1/completions']);
/** Messages clients expect Anthropic-shaped errors even when they leave the version header out. */
const ANTHROPIC_PATHS = new Set(['/v1/messages']);

/**
 * Which envelope this request's errors use (spec, Errors: envelope rules): the
 * messages contract's version header wins, then the route's own family.
 */
export function surfaceOf(req: Request): Surface {
  if (req.headers['anthropic-version'] !== undefined || ANTHROPIC_PATHS.has(req.path)) return 'anthropic';
  if (OPENAI_PATHS.has(req.path)) return 'openai';
  return 'generic';
}

export function sendError(req: Request, res: Response, err: unknown): void {
  const { status, headers, body } = toHttpError(err, surfaceOf(req));
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
