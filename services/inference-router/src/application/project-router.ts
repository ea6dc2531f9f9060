/**
 * Router projects: setting, reading and removing a project's router, and
 * planning one routed call with the policy of domain/routing.ts.
 */
import { Reasons, errors, isAppError, isUuid } from '@whetstone/errors';
import { approxTokens, type ChatRequest, promptText } from '../domain/chat';
import type { Caller } from '../domain/model';
import {
  MAX_ROUTER_CANDIDATES,
  type ProjectRouterRow,
  ratesOf,
  rank,
  routePlan,
  type Savings,
  savingsOf,
} from '../domain/routing';
import type { RouterDeps } from './deps';
import { modelTarget, requireProject, type Target } from './resolve-target';

/** What the team sets: candidate model ids, the reference model, and the rules. */
export interface RouterInput {
  candidates: string[];
  referenceModel: string;
  maxPromptTokens: number;
}

/** A model of a router with the rates it is ranked by, in credits per million tokens. */
export interface RankedModel {
  modelId: string;
  inputPerMillion: number;
  outputPerMillion: number;
}

/** A router as the team reads it: as stored, plus the candidates cheapest first (those servable now). */
export interface RouterView {
  router: ProjectRouterRow;
  ranking: RankedModel[];
  /** Unset when the reference cannot serve right now (e.g. its job was deleted). */
  reference?: RankedModel;
}

const ranked = (t: Target): RankedModel => ({ modelId: t.ref.modelId, ...ratesOf(t.entry.price) });

function invalid(field: string, message: string): never {
  throw errors.invalid(Reasons.VALIDATION_FAILED, `Invalid ${field}: ${message}.`, [{ field, message }]);
}

function checkInput(input: RouterInput): void {
  const { candidates } = input;
  if (!candidates.length || candidates.length > MAX_ROUTER_CANDIDATES)
    invalid('candidates', `give 1 to ${MAX_ROUTER_CANDIDATES} model ids`);
  if (new Set(candidates).size !== candidates.length) invalid('candidates', 'each model id may appear once');
  if (!input.referenceModel) invalid('reference_model', 'give a model id');
  if (candidates.includes(input.referenceModel))
    invalid('candidates', 'the reference model is the fallback; it cannot also be a candidate');
  if (!Number.isInteger(input.maxPromptTokens) || input.maxPromptTokens < 0)
    invalid('rules.max_prompt_tokens', 'must be a whole number of tokens, 0 or more');
}

/** Kinds of a model that cannot serve the team now: a router skips such a candidate rather than failing. */
const UNSERVABLE = new Set(['NotFound', 'FailedPrecondition', 'PermissionDenied']);

/** The candidates that can serve the team now, in the given order. */
async function servableCandidates(deps: RouterDeps, caller: Caller, ids: string[]): Promise<Target[]> {
  const targets: Target[] = [];
  for (const id of ids) {
    try {
      targets.push(await modelTarget(deps, caller, id, 'any'));
    } catch (err) {
      if (!(isAppError(err) && UNSERVABLE.has(err.kind))) throw err;
      deps.logger.debug({ model: id, reason: err.reason }, 'a router candidate cannot serve now; skipped');
    }
  }
  return targets;
}

async function viewOf(deps: RouterDeps, caller: Caller, router: ProjectRouterRow): Promise<RouterView> {
  const candidates = await servableCandidates(deps, caller, router.candidates);
  const [reference] = await servableCandidates(deps, caller, [router.referenceModel]);
  return {
    router,
    ranking: rank(candidates.map((t) => ({ id: t.ref.modelId, entry: t.entry, t }))).map((c) => ranked(c.t)),
    ...(reference ? { reference: ranked(reference) } : {}),
  };
}

/**
 * Makes the project a router, or replaces its router. Every model must be one
 * the team can call now: an unknown one is NotFound, a training-only base 409.
 */
export async function setProjectRouter(
  deps: RouterDeps,
  caller: Caller,
  projectId: string,
  input: RouterInput,
): Promise<RouterView> {
  const project = await requireProject(deps, caller, projectId);
  checkInput(input);
  for (const id of [input.referenceModel, ...input.candidates]) await modelTarget(deps, caller, id, 'any');
  const router = await deps.store.putRouter({
    projectId: project.id,
    teamId: caller.teamId,
    ...input,
    updatedAt: deps.now(),
  });
  return viewOf(deps, caller, router);
}

/** The project's router; NotFound ROUTER_NOT_SET when it is not a router. */
export async function getProjectRouter(deps: RouterDeps, caller: Caller, projectId: string): Promise<RouterView> {
  const project = await requireProject(deps, caller, projectId);
  const router = await deps.store.getRouter(caller.teamId, project.id);
  if (!router) throw errors.notFound('ROUTER_NOT_SET', `Project '${project.name}' is not a router.`);
  return viewOf(deps, caller, router);
}

/** Turns routing off; done also when the project was not a router. */
export async function deleteProjectRouter(deps: RouterDeps, caller: Caller, projectId: string): Promise<void> {
  const project = await requireProject(deps, caller, projectId);
  await deps.store.deleteRouter(caller.teamId, project.id);
}

/** The router of the team's project named by a chat call's model; null when the model is not a router project. */
export async function routerOf(deps: RouterDeps, caller: Caller, model: string): Promise<ProjectRouterRow | null> {
  if (deps.catalog.get(model) || !isUuid(model)) return null;
  return deps.store.getRouter(caller.teamId, model);
}

/** One routed call's plan: the models to try in order, the reference, and the savings of a pick. */
export async function routeCall(
  deps: RouterDeps,
  caller: Caller,
  request: ChatRequest,
  router: ProjectRouterRow,
): Promise<{ attempts: Target[]; reference: Target; savings: (pick: Target) => Savings | undefined }> {
  const reference = await modelTarget(deps, caller, router.referenceModel, 'any');
  const candidates = await servableCandidates(deps, caller, router.candidates);
  const needs = {
    promptTokens: approxTokens(promptText(request)),
    tools: request.tools.length > 0,
    schema: request.schemaJson.length > 0,
    responseFormat: request.responseFormat !== undefined,
    logitBias: request.options.logitBias !== undefined,
    promptLogprobs: request.options.promptLogprobs === true && request.options.logprobs !== undefined,
  };
  const routable = (t: Target) => ({ id: t.ref.modelId, entry: t.entry, t });
  const plan = routePlan(candidates.map(routable), routable(reference), needs, router);
  return {
    attempts: plan.map((p) => p.t),
    reference,
    savings: (pick) => savingsOf(pick.entry.price, reference.entry.price),
  };
}

/**
 * Failures of a pick before its first piece that the reference answers
 * instead: down, overloaded or warming; never once the caller has gone away.
 */
export function failsOver(err: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return false;
  return isAppError(err) && (err.kind === 'Unavailable' || err.kind === 'TooEarly');
}
