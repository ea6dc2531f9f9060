// The route schemas use zod's .openapi() extension, which the api module installs.
import '../../api';
import type { z } from 'zod';
import { ChatCompletionsBody } from './chat-completions.schema';
import { MessagesBody } from './messages.schema';
import { InferenceBody, SystemOneBody } from '../inference/schemas';

/** What a 422 says about a body: each problem's field and message, as the error table renders them. */
function problems(schema: z.ZodType, body: unknown): string[] {
  const parsed = schema.safeParse(body);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('what the compatible surfaces say of content they do not take', () => {
  const user = (content: unknown) => [{ role: 'user', content }];

  it('when a chat message holds an image part, a stop list is too long or tool_choice is unknown, then each says what is taken', () => {
    const image = [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }];
    expect(problems(ChatCompletionsBody, { model: 'm', messages: user(image) })).toEqual([
      'messages.0.content: must be a string or a list of text parts ({"type": "text", "text": …}); image, audio and file parts are not taken',
    ]);
    const asked = { model: 'm', messages: user('hi') };
    expect(problems(ChatCompletionsBody, { ...asked, stop: ['a', 'b', 'c', 'd', 'e'] })).toEqual([
      'stop: must be a non-empty string or a list of at most 4 of them',
    ]);
    expect(problems(ChatCompletionsBody, { ...asked, tool_choice: { type: 'custom' } })).toEqual([
      'tool_choice: must be "none", "auto", "required" or {"type": "function", "function": {"name": …}}',
    ]);
    // A text that is too long keeps its own message.
    expect(problems(ChatCompletionsBody, { model: 'm', messages: user('x'.repeat(1_000_001)) })).toEqual([
      'messages.0.content: must be at most 1,000,000 characters',
    ]);
  });

  it('when a Messages call holds an image block, then the message names the blocks that are taken', () => {
    const image = [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } }];
    expect(problems(MessagesBody, { model: 'm', max_tokens: 8, messages: user(image) })).toEqual([
      'messages.0.content: must be a string or a list of text, tool_use (id, name, input), tool_result (tool_use_id) or thinking blocks; image and document blocks are not taken',
    ]);
    expect(problems(MessagesBody, { model: 'm', max_tokens: 8, system: [image[0]], messages: user('hi') })).toEqual([
      'system: must be a string or a list of text blocks ({"type": "text", "text": …})',
    ]);
    const stops = (n: number) => Array.from({ length: n }, (_, i) => `stop${i}`);
    const asked = { model: 'm', max_tokens: 8, messages: user('hi') };
    expect(problems(MessagesBody, { ...asked, stop_sequences: stops(64) })).toEqual([]);
    expect(problems(MessagesBody, { ...asked, stop_sequences: stops(65) })).toEqual([
      'stop_sequences: must hold at most 64 sequences',
    ]);
  });

  it('when the native surfaces get a wrong stop, content or option, then the message says what is taken', () => {
    const generate = { model_id: 'm', task: 'generate', messages: [{ role: 'user', content: [{ type: 'image' }] }] };
    expect(problems(InferenceBody, { ...generate, stop: 7 })).toEqual([
      'messages.0.content: must be a string or a list of 1–100 text blocks ({"type": "text", "text": …})',
      'stop: must be a non-empty string or a list of at most 4 of them',
    ]);
    expect(problems(SystemOneBody, { text: 'x', options: ['a', { name: 'b' }] })).toEqual([
      'options.1: must be an option id (1–200 characters) or {id, description?}',
    ]);
  });
});
