import { randomUUID } from 'node:crypto';
import { AppError } from '@whetstone/errors';
import type { ConversationsPort, NewConversationItem } from '../../../../application/history-ports';
import { withConversation } from './conversations';
import type { ResponsesBody } from './responses.schema';

const principal = { keyId: 'k', teamId: 't', userId: 'u' };
const conversationId = randomUUID();

/** A ConversationsPort whose appends fail with `failures` first, then succeed; it keeps every append it was asked. */
function flakyConversations(failures: AppError[]) {
  const appends: { items: NewConversationItem[]; key: string | undefined }[] = [];
  const port = {
    listItems: async () => ({ items: [], hasMore: false }),
    addItems: async (_p: unknown, _id: string, items: NewConversationItem[], key?: string) => {
      appends.push({ items, key });
      const failure = failures.shift();
      if (failure) throw failure;
      return [];
    },
  } as unknown as ConversationsPort;
  return { port, appends };
}

const body = { model: 'gpt-test', input: 'hello' } as ResponsesBody;
const unavailable = () => new AppError('Unavailable', 'DEPENDENCY_UNAVAILABLE', 'history is restarting');

describe('withConversation: appending a call to its conversation', () => {
  it('when inference-history is briefly unavailable, then the append is retried under the response id until it lands', async () => {
    const { port, appends } = flakyConversations([unavailable(), unavailable()]);
    const joined = await withConversation(port, principal, body, `conv_${conversationId}`);
    const responseId = randomUUID();
    await joined.append({ responseId, text: 'hi there', toolCalls: [] });
    expect(appends).toHaveLength(3);
    expect(appends.map((a) => a.key)).toEqual([responseId, responseId, responseId]);
    expect(appends[0]!.items.map((i) => [i.role, i.texts])).toEqual([
      ['user', ['hello']],
      ['assistant', ['hi there']],
    ]);
  });

  it('when the append fails for another reason, then it is not retried', async () => {
    const notFound = new AppError('NotFound', 'CONVERSATION_NOT_FOUND', 'gone');
    const { port, appends } = flakyConversations([notFound]);
    const joined = await withConversation(port, principal, body, `conv_${conversationId}`);
    await expect(joined.append({ responseId: randomUUID(), text: 'x', toolCalls: [] })).rejects.toBe(notFound);
    expect(appends).toHaveLength(1);
  });
});
