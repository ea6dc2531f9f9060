import type { Request } from 'express';
import { AppError, Reasons, type FieldError } from '@whetstone/errors';
import type { z } from 'zod';

function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    field: issue.path.map(String).join('.') || '(body)',
    message: issue.message,
    code: issue.code,
  }));
}

/** Validate a JSON body: 422 `{detail, errors}` listing every bad field. */
export function parseBody<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  const body: unknown = req.body;
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

/** Validate query or path parameters: wrong types are a malformed request, 400 `{detail}`. */
export function parseParams<S extends z.ZodType>(schema: S, value: unknown, where: 'query' | 'path'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = fieldErrors(result.error)
    .map((f) => `${f.field}: ${f.message}`)
    .join('; ');
  throw new AppError('Malformed', Reasons.MALFORMED_PARAMETER, `Invalid ${where} parameter: ${problems}`);
}
