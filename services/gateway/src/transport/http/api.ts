import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  extendZodWithOpenApi,
  type ResponseConfig,
} from '@asteasolutions/zod-to-openapi';
import type { Surface } from '@whetstone/errors';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { surfaceFor } from './errors';
import { parseBody } from './validate';

extendZodWithOpenApi(z);

export type AuthMode = 'none' | 'key' | 'session' | 'key-or-session';

export interface RouteSpec<B extends z.ZodType | undefined> {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  summary: string;
  tag: string;
  auth: AuthMode;
  body?: B;
  /** A multipart/form-data body the handler reads itself (documented only; `body` is for JSON). */
  form?: z.ZodType;
  /** Documented success status and shape. */
  response?: { status: number; description: string; schema?: z.ZodType };
  /** Error answers this route documents beyond (or instead of) the shared ones, by status. */
  errors?: Record<number, { description: string; schema?: z.ZodType }>;
}

export type Handler<B> = (ctx: { req: Request; res: Response; body: B }) => Promise<unknown> | unknown;

/**
 * One place where a route is declared: its validator, its auth and rate-limit
 * chain, and its OpenAPI entry all come from the same RouteSpec.
 */
export class Api {
  readonly router = Router();
  readonly registry = new OpenAPIRegistry();

  constructor(private readonly chain: (auth: AuthMode) => RequestHandler[]) {
    this.registry.registerComponent('securitySchemes', 'ApiKey', { type: 'apiKey', in: 'header', name: 'X-API-Key' });
    this.registry.registerComponent('securitySchemes', 'Bearer', { type: 'http', scheme: 'bearer' });
    this.registry.registerComponent('securitySchemes', 'Session', {
      type: 'apiKey',
      in: 'cookie',
      name: 'wst_session',
    });
  }

  route<B extends z.ZodType | undefined>(
    spec: RouteSpec<B>,
    handler: Handler<B extends z.ZodType ? z.infer<B> : undefined>,
  ): void {
    const run: RequestHandler = async (req, res) => {
      const body = (spec.body ? parseBody(spec.body, req) : undefined) as B extends z.ZodType ? z.infer<B> : undefined;
      const result = await handler({ req, res, body });
      if (res.headersSent) return;
      const status = spec.response?.status ?? 200;
      if (result === undefined) res.status(status).end();
      else res.status(status).json(result);
    };
    this.router[spec.method](spec.path, ...this.chain(spec.auth), run);
    this.document(spec);
  }

  private document(spec: RouteSpec<z.ZodType | undefined>): void {
    const schemes: Record<AuthMode, string[]> = {
      none: [],
      session: ['Session'],
      key: ['ApiKey', 'Bearer'],
      'key-or-session': ['ApiKey', 'Bearer', 'Session'],
    };
    const security: Record<string, string[]>[] = schemes[spec.auth].map((name) => ({ [name]: [] }));
    const response = spec.response ?? { status: 200, description: 'OK' };
    // Every `:name` of the path is a required string parameter.
    const names = [...spec.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const params = names.length ? z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) : undefined;
    const body = spec.body
      ? { body: { required: true, content: { 'application/json': { schema: spec.body } } } }
      : spec.form
        ? { body: { required: true, content: { 'multipart/form-data': { schema: spec.form } } } }
        : {};
    this.registry.registerPath({
      method: spec.method,
      path: spec.path.replace(/:(\w+)/g, '{$1}'),
      summary: spec.summary,
      tags: [spec.tag],
      security,
      ...(params || spec.body || spec.form ? { request: { ...(params ? { params } : {}), ...body } } : {}),
      responses: {
        [response.status]: {
          description: response.description,
          ...(response.schema ? { content: { 'application/json': { schema: response.schema } } } : {}),
        },
        ...SHARED_ERRORS[surfaceFor(spec.path, false)],
        ...Object.fromEntries(
          Object.entries(spec.errors ?? {}).map(([status, e]) => [
            status,
            {
              description: e.description,
              ...(e.schema ? { content: { 'application/json': { schema: e.schema } } } : {}),
            },
          ]),
        ),
      },
    });
  }

  openApiDocument(): object {
    return new OpenApiGeneratorV31(this.registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: {
        title: 'Whetstone',
        version: '2.0.0',
        description: 'Training and serving of extraction and decoder models.',
      },
    });
  }
}

const detail = {
  content: {
    'application/json': { schema: { type: 'object' as const, properties: { detail: { type: 'string' as const } } } },
  },
};
/** 422: each entry of `errors` names its field and says what is wrong, with a stable code. */
const validation = {
  content: {
    'application/json': {
      schema: {
        type: 'object' as const,
        required: ['detail', 'errors'],
        properties: {
          detail: { type: 'string' as const },
          errors: {
            type: 'array' as const,
            items: {
              type: 'object' as const,
              required: ['field', 'message'],
              properties: {
                field: { type: 'string' as const, description: 'Dotted path, e.g. `datasets.0.name`' },
                message: {
                  type: 'string' as const,
                  description: 'What is wrong with it, e.g. `must be at least 8 characters`',
                },
                code: {
                  type: 'string' as const,
                  description: 'Stable code, e.g. `required`, `too_small`, `not_allowed`',
                },
              },
            },
          },
        },
      },
    },
  },
};
const ERROR_RESPONSES = {
  400: { description: 'Malformed request: invalid JSON, or a path/query parameter of the wrong type', ...detail },
  401: { description: 'Key missing, malformed, revoked, or account blocked', ...detail },
  422: { description: 'Body failed validation: `{detail, errors}`', ...validation },
  429: { description: 'Rate limit exceeded: `{detail, code, scope}` with Retry-After and X-RateLimit-Scope/Code' },
  500: { description: 'Unhandled server error: `{error, message}`' },
};

/** A compatible surface's shared errors: the same statuses, each in that surface's envelope (docs/api.md, Errors). */
/** A documented response body's schema, as zod-to-openapi takes it. */
type BodySchema = NonNullable<NonNullable<ResponseConfig['content']>[string]>['schema'];

function inEnvelope(schema: BodySchema): Record<string, ResponseConfig> {
  const content = { content: { 'application/json': { schema } } };
  return Object.fromEntries(
    Object.entries(ERROR_RESPONSES).map(([status, r]) => [
      status,
      { description: `${r.description.split(':')[0]}, in this surface's error envelope`, ...content },
    ]),
  );
}
const text = { type: 'string' as const };
const nullableText = { type: ['string', 'null'] as ['string', 'null'] };
const SHARED_ERRORS: Record<Surface, Record<string, ResponseConfig>> = {
  generic: ERROR_RESPONSES,
  openai: inEnvelope({
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        properties: { message: text, type: text, param: nullableText, code: nullableText },
      },
    },
  }),
  anthropic: inEnvelope({
    type: 'object',
    required: ['type', 'error'],
    properties: {
      type: { type: 'string', enum: ['error'] },
      error: { type: 'object', required: ['type', 'message'], properties: { type: text, message: text } },
    },
  }),
};
