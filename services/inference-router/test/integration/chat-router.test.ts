import { randomUUID } from 'node:crypto';
import { FinishReason, InferenceStatus } from '@whetstone/proto/inference/v1';
import { chatRequest, collect, outboxOf } from './chat-support';
import { rpcError, startHarness, team, type Harness } from './harness';

/**
 * Router projects over real gRPC: the reference is `claude-fake` (3,000 / 15,000
 * micro-credits per 1,000 tokens, i.e. 3 / 15 credits per million), the cheap
 * candidate `gpt-mini-fake` (1 / 5 per million), both on the fake upstreams.
 */
describe('Chat on a router project over real gRPC and HTTP', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  }, 60_000);
  afterAll(() => h?.close());
  beforeEach(() => {
    h.openai.reset();
    h.anthropic.reset();
  });

  async function routerProject(rules: { maxPromptTokens?: number } = {}) {
    const { project } = await h.client.createProject({ caller: team, name: `router-${randomUUID()}` });
    const { router } = await h.client.setProjectRouter({
      caller: team,
      projectId: project!.id,
      candidates: ['gpt-fake', 'gpt-mini-fake'],
      referenceModel: 'claude-fake',
      maxPromptTokens: rules.maxPromptTokens ?? 0,
    });
    return { projectId: project!.id, router: router! };
  }

  const chat = (model: string) => collect(h.client.chat({ caller: team, ...chatRequest({ model }) } as never));

  it('when a router is set, then it is stored with its candidates ranked cheapest first, and GET returns it', async () => {
    const { projectId, router } = await routerProject({ maxPromptTokens: 500 });
    expect(router).toMatchObject({
      projectId,
      candidates: ['gpt-fake', 'gpt-mini-fake'],
      referenceModel: 'claude-fake',
      maxPromptTokens: 500,
      ranking: [
        { modelId: 'gpt-mini-fake', inputPerMillion: 1, outputPerMillion: 5 },
        { modelId: 'gpt-fake', inputPerMillion: 3, outputPerMillion: 15 },
      ],
      reference: { modelId: 'claude-fake', inputPerMillion: 3, outputPerMillion: 15 },
    });
    const read = await h.client.getProjectRouter({ caller: team, projectId });
    expect(read.router?.ranking.map((r) => r.modelId)).toEqual(['gpt-mini-fake', 'gpt-fake']);
  });

  it('when the cheap candidate may take the call, then it answers, billed and recorded as itself, with routed_model and savings', async () => {
    const { projectId } = await routerProject();
    const { text, last } = await chat(projectId);
    expect(text).toBe('Echo: HELLO THERE');
    expect(h.openai.requests.map((r) => (r.body as { model: string }).model)).toEqual(['gpt-4o-mini-fake']);
    expect(h.anthropic.requests).toHaveLength(0);
    expect(last).toMatchObject({
      finishReason: FinishReason.STOP,
      model: 'gpt-mini-fake',
      routedModel: 'gpt-mini-fake',
    });
    expect(last.savings).toMatchObject({ inputPerMillion: 2, outputPerMillion: 10 });
    // 2 input tokens at 1,000 per 1k and 3 output at 5,000 per 1k: the routed model's rates.
    expect(last.usage).toMatchObject({ inputTokens: 2n, outputTokens: 3n, costMicroCredits: 2n + 15n });
    const { usage, completed } = await outboxOf(h, last.responseId);
    expect(usage[0]).toMatchObject({ model: 'gpt-mini-fake', costMicroCredits: 17n });
    expect(completed[0]).toMatchObject({ model: 'gpt-mini-fake', projectId, status: InferenceStatus.SUCCEEDED });
  });

  it('when a rule excludes every candidate, then the reference answers with routed_model empty and no savings', async () => {
    // "hello there" is 11 characters: 3 estimated tokens, over the limit of 2.
    const { projectId } = await routerProject({ maxPromptTokens: 2 });
    const { text, last } = await chat(projectId);
    expect(text).toBe('Echo: HELLO THERE');
    expect(h.openai.requests).toHaveLength(0);
    expect(last).toMatchObject({ model: 'claude-fake', routedModel: '' });
    expect(last.savings).toBeUndefined();
    expect(last.usage?.costMicroCredits).toBe(6n + 45n);
  });

  it('when the candidate fails before its first piece, then the reference answers the same call, and only it is metered', async () => {
    const { projectId } = await routerProject();
    h.openai.behave({ kind: 'status', status: 503 }, 1);
    const { text, last } = await chat(projectId);
    expect(text).toBe('Echo: HELLO THERE');
    expect(h.openai.requests).toHaveLength(1);
    expect(h.anthropic.requests).toHaveLength(1);
    expect(last).toMatchObject({ model: 'claude-fake', routedModel: '' });
    expect(last.savings).toBeUndefined();
    const { usage, completed } = await outboxOf(h, last.responseId);
    expect(usage.map((u) => u.model)).toEqual(['claude-fake']);
    expect(completed.map((c) => c.model)).toEqual(['claude-fake']);
  });

  it('when the candidate is refused for another reason, then the call fails as it would without routing', async () => {
    const { projectId } = await routerProject();
    h.openai.behave({ kind: 'status', status: 400, message: 'bad request' }, 1);
    expect(await rpcError(chat(projectId))).toMatchObject({ kind: 'InvalidArgument' });
    expect(h.anthropic.requests).toHaveLength(0);
  });

  it('when a model is unknown or the project is another team’s, then setting the router is NotFound; a bad list names its field', async () => {
    const { projectId } = await routerProject();
    const set = (over: Record<string, unknown>) =>
      rpcError(
        h.client.setProjectRouter({
          caller: team,
          projectId,
          candidates: ['gpt-mini-fake'],
          referenceModel: 'claude-fake',
          ...over,
        }),
      );
    expect(await set({ candidates: ['no-such-model'] })).toMatchObject({ kind: 'NotFound', reason: 'MODEL_NOT_FOUND' });
    expect(await set({ caller: { ...team, teamId: 'team-b' } })).toMatchObject({ reason: 'PROJECT_NOT_FOUND' });
    const dup = await set({ candidates: ['gpt-mini-fake', 'claude-fake'] });
    expect(dup).toMatchObject({ kind: 'InvalidArgument' });
    expect(dup.fieldErrors?.[0]?.field).toBe('candidates');
  });

  it('when the router is deleted, then the project is no router: GET is NotFound and calls need an active deployment again', async () => {
    const { projectId } = await routerProject();
    await h.client.deleteProjectRouter({ caller: team, projectId });
    expect(await rpcError(h.client.getProjectRouter({ caller: team, projectId }))).toMatchObject({
      reason: 'ROUTER_NOT_SET',
    });
    expect(await rpcError(chat(projectId))).toMatchObject({ reason: 'MODEL_NOT_SERVABLE' });
  });
});
