// Every dashboard page: [path after /dashboard/, render(main, params, query) → cleanup?].
import { homePage } from './home.js';
import { creditsPage, keysPage, loginPage } from './account.js';
import { datasetPage, datasetsPage } from './datasets.js';
import { jobPage, trainingPage } from './training.js';
import { adaptivePage, projectPage, projectsPage } from './projects.js';
import { inferencePage, inferencesPage } from './inferences.js';
import { chatPage } from './chat.js';
import { batchesPage } from './batches.js';

export const routes = [
  ['', homePage],
  ['login', loginPage],
  ['keys', keysPage],
  ['credits', creditsPage],
  ['datasets', datasetsPage],
  ['datasets/:name', datasetPage],
  ['training', trainingPage],
  ['training/:id', jobPage],
  ['projects', projectsPage],
  ['projects/:id', projectPage],
  ['projects/:id/adaptive', adaptivePage],
  ['inferences', inferencesPage],
  ['inferences/:id', inferencePage],
  ['chat', chatPage],
  ['batches', batchesPage],
];
