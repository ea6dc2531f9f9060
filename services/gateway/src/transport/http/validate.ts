import type { Request, RequestHandler } from 'express';
import { AppError, Reasons, type FieldError } from '@whetstone/errors';
import type { z } from 'zod';

function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    field: issue.path.map(String).join('.') || '(body)',
    message: issue.message,
    code: issue.code,
  }));
}

/** The largest integer a protobuf int32 field carries: bigger inputs are refused at the edge, not by the encoder. */
export const INT32_MAX = 2 ** 31 - 1;

const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain NUL (\\u0000) characters';

/** Every string (value or key) of a JSON body that holds a NUL character, by dotted path; at most `max`. */
function nulFields(body: unknown, max = 10): FieldError[] {
  const found: FieldError[] = [];
  const stack: [unknown, string][] = [[body, '']];
  while (stack.length && found.length < max) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes(NUL)) found.push({ field: path || '(body)', message: NUL_MESSAGE, code: 'nul_character' });
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const at = path ? `${path}.${key}` : key;
        if (key.includes(NUL)) found.push({ field: at, message: NUL_MESSAGE, code: 'nul_character' });
        stack.push([child, at]);
      }
    }
  }
  return found;
}

/**
 * The one rule for the request line, before any route: every path segment must
 * be valid percent-encoding (else 400), and no path segment or query value may
 * hold a NUL character (400), which no store can keep (Postgres refuses 0x00 in
 * text) and which no name, id or filter legitimately contains.
 */
export const checkRequestLine: RequestHandler = (req, _res, next) => {
  for (const segment of req.path.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw new AppError(
        'Malformed',
        Reasons.MALFORMED_PARAMETER,
        'Invalid path parameter: malformed percent-encoding (each % must start a valid UTF-8 escape such as %20)',
      );
    }
    if (decoded.includes(NUL))
      throw new AppError('Malformed', Reasons.MALFORMED_PARAMETER, 'Invalid path parameter: contains a NUL character');
  }
  for (const [name, value] of Object.entries(req.query)) {
    if (name.includes(NUL) || [value].flat().some((v) => typeof v === 'string' && v.includes(NUL)))
      throw new AppError(
        'Malformed',
        Reasons.MALFORMED_PARAMETER,
        `Invalid query parameter: ${name.replaceAll(NUL, '\\u0000')} contains a NUL character`,
      );
  }
  next();
};

/** Validate a JSON body: 422 `{detail, errors}` listing every bad field. No string may hold a NUL character. */
export function parseBody<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  const body: unknown = req.body;
  const nul = nulFields(body);
  if (nul.length)
    throw new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, 'Request body failed validation', {
      fieldErrors: nul,
    });
  if (
    body === undefined ||
    body === null ||
    (typeof body === 'object' && Object.keys(body as object).length === 0 && !req.is('application/json'))
  ) {
    const result = schema.safeParse({});
    if (result.success) return result.data;
    throw new AppError(
      'InvalidArgument',
      Reasons.VALIDATION_FAILED,
      'Request body failed validation (send JSON with Content-Type: application/json)',
      {
        fieldErrors: fieldErrors(result.error),
      },
    );
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, 'Request body failed validation', {
    fieldErrors: fieldErrors(result.error),
  });
}

/** A body field that passed its schema but cannot be used as it is (no message left, a stream in a batch): 422 naming it. */
export const invalidBody = (field: string, message: string) =>
  new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, 'Request body failed validation', {
    fieldErrors: [{ field, message }],
  });

/** A well-typed query parameter whose value is not acceptable (an unknown cursor, bad metadata): 422 naming it. */
export const invalidQuery = (field: string, message: string) =>
  new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, 'Invalid query parameter', {
    fieldErrors: [{ field, message }],
  });

/** Validate query or path parameters: wrong types are a malformed request, 400 `{detail}`. */
export function parseParams<S extends z.ZodType>(schema: S, value: unknown, where: 'query' | 'path'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = fieldErrors(result.error)
    .map((f) => `${f.field}: ${f.message}`)
    .join('; ');
  throw new AppError('Malformed', Reasons.MALFORMED_PARAMETER, `Invalid ${where} parameter: ${problems}`);
}
