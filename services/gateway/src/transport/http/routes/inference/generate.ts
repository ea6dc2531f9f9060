import type { Response } from 'express';
import type { z } from 'zod';
import { AppError } from '@whetstone/errors';
import type { GenerateInput, GeneratePiece, Inference } from '../../../../application/ports';
import { authOf } from '../../auth';
import type { InferenceBody, Message } from './schemas';

/** The decoder fields a generate call reads; /inference and a project's endpoint both carry them. */
export type GenerateBody = Pick<
  z.infer<typeof InferenceBody>,
  'messages' | 'temperature' | 'top_p' | 'max_tokens' | 'stop' | 'seed' | 'stream' | 'model_id' | 'base_model'
>;

/** Content blocks are joined into one text; `cache_control` markers are accepted (the built-in decoder has no prompt cache). */
const flatten = (content: z.infer<typeof Message>['content']) =>
  typeof content === 'string' ? content : content.map((b) => b.text).join('');

/** The public defaults applied once, here: inner services take every value as given. */
function generateInputOf(body: GenerateBody, projectId: string): GenerateInput {
  return {
    modelId: body.model_id ?? body.base_model ?? '',
    projectId,
    messages: (body.messages ?? []).map((m) => ({ role: m.role, content: flatten(m.content) })),
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    maxTokens: body.max_tokens ?? 128,
    stop: typeof body.stop === 'string' ? [body.stop] : (body.stop ?? []),
    seed: body.seed ?? 0,
  };
}

type Pieces = AsyncIterator<GeneratePiece>;

/** One JSON answer: the whole text, then the metering of the last piece. */
async function collect(iterator: Pieces, first: IteratorResult<GeneratePiece>) {
  let text = '';
  for (let next = first; !next.done; next = await iterator.next()) {
    const piece = next.value;
    if ('text' in piece) text += piece.text;
    else return { result: { text }, ...piece.done };
  }
  return { result: { text } };
}

/** Server-Sent Events; an error after the first byte is an error event, since the status is already sent. */
async function stream(res: Response, iterator: Pieces, first: IteratorResult<GeneratePiece>): Promise<undefined> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  try {
    for (let next = first; !next.done; next = await iterator.next())
      res.write(`data: ${JSON.stringify(next.value)}\n\n`);
  } catch (err) {
    const detail = err instanceof AppError ? err.message : 'generation was interrupted';
    res.write(`event: error\ndata: ${JSON.stringify({ detail })}\n\n`);
  }
  res.end('data: [DONE]\n\n');
  return undefined;
}

/** Decoder generation: one JSON answer, or Server-Sent Events with `stream: true`. */
export async function respondGenerate(inference: Inference, res: Response, body: GenerateBody, projectId = '') {
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const pieces = inference.generate(authOf(res).principal, generateInputOf(body, projectId), controller.signal);
  const iterator = pieces[Symbol.asyncIterator]();
  // The first piece arrives before any byte is written, so errors (404, 409, 402) keep their status.
  const first = await iterator.next();
  return body.stream ? stream(res, iterator, first) : collect(iterator, first);
}
