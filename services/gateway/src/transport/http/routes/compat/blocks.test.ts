import type { ChatInput } from '../../../../application/ports';
import { chatInput } from './chat-input.fixture';
import { capBreakpoints, CacheControl, Metadata, ttlSeconds, turn } from './blocks';

const input = (over: Partial<ChatInput>): ChatInput => chatInput({ surface: 'messages', ...over });

describe('cache markers', () => {
  it('when a ttl is given in seconds, minutes or hours, then it becomes seconds; none is the default (0)', () => {
    expect(ttlSeconds({ type: 'ephemeral', ttl: '30s' })).toBe(30);
    expect(ttlSeconds({ type: 'ephemeral', ttl: '5m' })).toBe(300);
    expect(ttlSeconds({ type: 'ephemeral', ttl: '1h' })).toBe(3600);
    expect(ttlSeconds({ type: 'ephemeral' })).toBe(0);
    expect(CacheControl.safeParse({ type: 'ephemeral', ttl: 'forever' }).success).toBe(false);
  });

  it('when more than four markers are sent, then the first four in prompt order (tools, system, messages) count', () => {
    const marked = (text: string) => ({ text, cacheTtlSeconds: 0 });
    const out = capBreakpoints(
      input({
        toolsCacheTtlSeconds: 60,
        system: [marked('s1'), marked('s2')],
        messages: [turn('user', [marked('u1'), marked('u2')])],
      }),
    );
    expect(out.toolsCacheTtlSeconds).toBe(60);
    expect(out.system).toEqual([marked('s1'), marked('s2')]);
    expect(out.messages[0]!.content).toEqual([marked('u1'), { text: 'u2' }]);
  });

  it('when four or fewer markers are sent, then every one is kept', () => {
    const out = capBreakpoints(input({ system: [{ text: 's', cacheTtlSeconds: 300 }] }));
    expect(out.system).toEqual([{ text: 's', cacheTtlSeconds: 300 }]);
    expect(out).not.toHaveProperty('toolsCacheTtlSeconds');
  });
});

describe("OpenAI's metadata", () => {
  const problems = (m: unknown) =>
    (Metadata.safeParse(m).error?.issues ?? []).map((i) => [i.path.join('.'), i.message]);

  it('takes up to 16 string pairs with keys of 1–64 characters and values of up to 512', () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v'.repeat(512)]));
    expect(problems(sixteen)).toEqual([]);
    expect(problems({ ...sixteen, k16: 'v' })).toEqual([['', 'must hold at most 16 pairs']]);
    expect(problems({ ['k'.repeat(65)]: 'v' })).toEqual([['k'.repeat(65), 'keys must be 1–64 characters']]);
    expect(problems({ '': 'v' })).toEqual([['', 'keys must be 1–64 characters']]);
    expect(problems({ k: 'v'.repeat(513) })).toEqual([['k', 'values must be at most 512 characters']]);
    expect(problems({ k: 1 })).toEqual([['k', 'values must be strings']]);
  });
});
