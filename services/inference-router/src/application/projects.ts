import { errors, isUuid } from '@whetstone/errors';
import type { ProjectRow } from '../domain/deployment';
import type { Caller } from '../domain/model';
import type { RouterDeps } from './deps';

/** Creates a project; the gateway has trimmed and checked the name (1 to 100 characters). */
export function createProject(deps: RouterDeps, caller: Caller, name: string): Promise<ProjectRow> {
  return deps.store.createProject({ id: deps.ids.uuid(), teamId: caller.teamId, name, createdAt: deps.now() });
}

/** The team's projects, newest first, each with its active job. */
export function listProjects(deps: RouterDeps, caller: Caller) {
  return deps.store.listProjects(caller.teamId);
}

/** Deletes the project and its history; another team's project is NotFound. */
export async function deleteProject(deps: RouterDeps, caller: Caller, projectId: string): Promise<void> {
  const deleted = isUuid(projectId) && (await deps.store.deleteProject(caller.teamId, projectId));
  if (!deleted) throw errors.notFound('PROJECT_NOT_FOUND', `Project '${projectId}' was not found.`);
}
