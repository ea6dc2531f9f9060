import { z } from 'zod';

export const Email = z.string().trim().toLowerCase().email('must be a valid email address').max(254);
export const Password = z.string().min(10, 'must be at least 10 characters').max(200, 'must be at most 200 characters');

export const SignUpBody = z.object({ email: Email, password: Password }).openapi('SignUpRequest');
export const LogInBody = z.object({ email: Email, password: z.string().min(1).max(200) }).openapi('LogInRequest');
export const CreateApiKeyBody = z
  .object({
    name: z.string().trim().min(1, 'is required').max(100),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .openapi('CreateApiKeyRequest');
export const DeleteApiKeyBody = z
  .object({ key_id: z.string().trim().min(1, 'is required').max(100) })
  .openapi('DeleteApiKeyRequest');

const Iso = z.string().nullable();

export const ApiKeyListEntry = z
  .object({
    id: z.string(),
    name: z.string(),
    created_at: Iso,
    api_key_last_digits: z.string(),
    expires_at: Iso,
    last_used_at: Iso,
    team_id: z.string().nullable(),
    usage_tokens: z.number(),
    usage_cost: z.number().openapi({ description: 'Credits (1 credit = $0.01)' }),
    request_count: z.number(),
  })
  .openapi('ApiKey');

export const ListApiKeysResponse = z
  .object({ keys: z.array(ApiKeyListEntry), count: z.number() })
  .openapi('ListApiKeysResponse');

export const CreateApiKeyResponse = z
  .object({
    secret_key: z.string().openapi({ description: 'The full key; shown only in this response' }),
    id: z.string(),
    name: z.string(),
    created_at: Iso,
    api_key_last_digits: z.string(),
    expires_at: Iso,
    team_id: z.string(),
    payment_customer_created: z.boolean(),
  })
  .openapi('CreateApiKeyResponse');

export const SuccessMessage = z
  .object({ success: z.boolean(), message: z.string().nullable() })
  .openapi('SuccessMessage');

export const Me = z
  .object({
    user: z.object({ id: z.string(), email: z.string(), created_at: Iso }),
    team: z.object({ id: z.string(), name: z.string() }),
    csrf_token: z.string(),
    expires_at: Iso,
  })
  .openapi('Session');
