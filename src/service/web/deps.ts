/** What the web pages are built from: the same store and settings as the API, no server of their own. */
import type { ArtifactService } from '../artifacts/service.ts';
import type { ServiceConfig } from '../config.ts';
import type { ServiceHooks } from '../app.ts';
import type { Store } from '../store/store.ts';

export interface WebDeps {
  store: Store;
  config: ServiceConfig;
  hooks: ServiceHooks;
  artifacts: ArtifactService;
}
