/** Projects and their deployment history, as the router stores them. */

export type DeploymentStatus = 'deploying' | 'active' | 'failed' | 'replaced' | 'released';

export interface ProjectRow {
  id: string;
  teamId: string;
  name: string;
  createdAt: Date;
}

export interface DeploymentRow {
  id: string;
  projectId: string;
  teamId: string;
  trainingJobId: string;
  bundleBucket: string;
  bundleKey: string;
  status: DeploymentStatus;
  /** Why it failed or was released, in words safe to show users. */
  reason: string | null;
  createdAt: Date;
  activatedAt: Date | null;
  endedAt: Date | null;
}

/** The reason stored on deployments of a deleted job. */
export const RELEASED_REASON = 'the training job was deleted';
