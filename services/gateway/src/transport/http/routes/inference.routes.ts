import type { Inference } from '../../../application/ports';
import type { Api } from '../api';
import { type CompatBackends, registerCompatRoutes } from './compat';
import { registerCatalogRoutes } from './inference/catalog.routes';
import { registerExtractionRoutes } from './inference/extraction.routes';
import { registerProjectRouterRoutes } from './inference/project-router.routes';
import { registerProjectRoutes } from './inference/projects.routes';

export { GlinerBody, InferenceBody, SystemOneBody } from './inference/schemas';

/** Native inference, GLiNER2 routes, the decision route, the catalog, projects with deployments, and the compatible surfaces. */
export function registerInferenceRoutes(api: Api, inference: Inference, backends: CompatBackends = {}): void {
  registerCatalogRoutes(api, inference);
  registerExtractionRoutes(api, inference);
  registerProjectRoutes(api, inference);
  registerProjectRouterRoutes(api, inference);
  registerCompatRoutes(api, inference, backends);
}
