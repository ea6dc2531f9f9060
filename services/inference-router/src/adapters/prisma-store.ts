import { create } from '@bufbuild/protobuf';
import { errors } from '@whetstone/errors';
import { encodeEvent, Topics } from '@whetstone/events';
import {
  DeploymentActivatedSchema,
  DeploymentEndedSchema,
  DeploymentFailedSchema,
} from '@whetstone/proto/inference/v1';
import type { ProjectStore } from '../application/ports';
import type { DeploymentRow } from '../domain/deployment';
import { Prisma, type PrismaClient } from '../generated/prisma/client';

export const DEPLOYMENTS_TOPIC = Topics.deployments;

type Tx = Prisma.TransactionClient;

const toRow = (d: DeploymentRow & Record<string, unknown>): DeploymentRow => ({
  id: d.id,
  projectId: d.projectId,
  teamId: d.teamId,
  trainingJobId: d.trainingJobId,
  bundleBucket: d.bundleBucket,
  bundleKey: d.bundleKey,
  status: d.status,
  reason: d.reason,
  createdAt: d.createdAt,
  activatedAt: d.activatedAt,
  endedAt: d.endedAt,
});

async function outbox(tx: Tx, row: ReturnType<typeof encodeEvent>): Promise<void> {
  await tx.outboxEvent.create({
    data: { topic: row.topic, key: row.key, type: row.type, payload: Buffer.from(row.payload), headers: row.headers },
  });
}

/** DeploymentEnded: an active deployment stopped serving its project (its job may still serve others). */
function ended(d: Pick<DeploymentRow, 'id' | 'projectId' | 'teamId' | 'trainingJobId'>, reason: string) {
  return encodeEvent(
    DEPLOYMENTS_TOPIC,
    DeploymentEndedSchema,
    create(DeploymentEndedSchema, {
      deploymentId: d.id,
      projectId: d.projectId,
      teamId: d.teamId,
      trainingJobId: d.trainingJobId,
      reason,
    }),
    d.projectId,
  );
}

type Projects = Pick<ProjectStore, 'createProject' | 'listProjects' | 'getProject' | 'deleteProject'>;
type Routers = Pick<ProjectStore, 'getRouter' | 'putRouter' | 'deleteRouter'>;
type Deployments = Omit<ProjectStore, keyof Projects | keyof Routers>;

/** Projects and deployments in the router's schema; state changes and their events commit together. */
export function prismaProjectStore(prisma: PrismaClient): ProjectStore {
  return { ...projects(prisma), ...routers(prisma), ...deploymentReads(prisma), ...deploymentChanges(prisma) };
}

function routers(prisma: PrismaClient): Routers {
  return {
    getRouter(teamId, projectId) {
      return prisma.projectRouter.findFirst({ where: { projectId, teamId } });
    },
    putRouter(row) {
      const { projectId, ...fields } = row;
      return prisma.projectRouter.upsert({ where: { projectId }, create: row, update: fields });
    },
    async deleteRouter(teamId, projectId) {
      const { count } = await prisma.projectRouter.deleteMany({ where: { projectId, teamId } });
      return count > 0;
    },
  };
}

function projects(prisma: PrismaClient): Projects {
  return {
    async createProject(row) {
      try {
        return await prisma.project.create({ data: row });
      } catch (err) {
        if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
          throw errors.alreadyExists(
            'PROJECT_NAME_TAKEN',
            `A project named '${row.name}' already exists in this team.`,
          );
        }
        throw err;
      }
    },
    async listProjects(teamId) {
      const rows = await prisma.project.findMany({
        where: { teamId },
        orderBy: { createdAt: 'desc' },
        include: { deployments: { where: { status: 'active' }, select: { trainingJobId: true }, take: 1 } },
      });
      return rows.map((p) => ({
        id: p.id,
        teamId: p.teamId,
        name: p.name,
        createdAt: p.createdAt,
        activeTrainingJobId: p.deployments[0]?.trainingJobId ?? null,
      }));
    },
    async getProject(teamId, projectId) {
      return prisma.project.findFirst({ where: { id: projectId, teamId } });
    },
    async deleteProject(teamId, projectId) {
      return prisma.$transaction(async (tx) => {
        // The active deployment goes with the project's history: its job may no longer serve anywhere.
        const active = await tx.deployment.findMany({ where: { projectId, teamId, status: 'active' } });
        const { count } = await tx.project.deleteMany({ where: { id: projectId, teamId } });
        if (count > 0) for (const d of active) await outbox(tx, ended(d, 'project_deleted'));
        return count > 0;
      });
    },
  };
}

function deploymentReads(prisma: PrismaClient): Omit<Deployments, 'activate' | 'fail' | 'releaseJob'> {
  return {
    async createDeployment(row) {
      return toRow(await prisma.deployment.create({ data: row }));
    },
    async listDeployments(projectId) {
      return (
        await prisma.deployment.findMany({ where: { projectId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] })
      ).map(toRow);
    },
    async listJobDeployments(teamId, trainingJobId) {
      return (
        await prisma.deployment.findMany({
          where: { teamId, trainingJobId },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        })
      ).map(toRow);
    },
    async activeDeployment(projectId) {
      const d = await prisma.deployment.findFirst({
        where: { projectId, status: 'active' },
        orderBy: { activatedAt: 'desc' },
      });
      return d ? toRow(d) : null;
    },
    async pendingDeployments() {
      return (await prisma.deployment.findMany({ where: { status: 'deploying' } })).map(toRow);
    },
  };
}

function deploymentChanges(prisma: PrismaClient): Pick<Deployments, 'activate' | 'fail' | 'releaseJob'> {
  return {
    async activate(deploymentId, at) {
      return prisma.$transaction(async (tx) => {
        // Lock the project's deployments so two activations cannot interleave.
        const target = await tx.deployment.findUnique({ where: { id: deploymentId } });
        if (!target || target.status !== 'deploying') return false;
        await tx.$queryRaw`SELECT id FROM deployments WHERE project_id = ${target.projectId}::uuid FOR UPDATE`;
        const previous = await tx.deployment.findFirst({ where: { projectId: target.projectId, status: 'active' } });
        if (previous) {
          await tx.deployment.update({ where: { id: previous.id }, data: { status: 'replaced', endedAt: at } });
          await outbox(tx, ended(previous, 'replaced'));
        }
        await tx.deployment.update({ where: { id: deploymentId }, data: { status: 'active', activatedAt: at } });
        await outbox(
          tx,
          encodeEvent(
            DEPLOYMENTS_TOPIC,
            DeploymentActivatedSchema,
            create(DeploymentActivatedSchema, {
              deploymentId,
              projectId: target.projectId,
              teamId: target.teamId,
              trainingJobId: target.trainingJobId,
              replacedTrainingJobId: previous?.trainingJobId ?? '',
            }),
            target.projectId,
          ),
        );
        return true;
      });
    },
    async fail(deploymentId, reason, at) {
      await prisma.$transaction(async (tx) => {
        const target = await tx.deployment.findUnique({ where: { id: deploymentId } });
        if (!target || target.status !== 'deploying') return;
        await tx.deployment.update({ where: { id: deploymentId }, data: { status: 'failed', reason, endedAt: at } });
        await outbox(
          tx,
          encodeEvent(
            DEPLOYMENTS_TOPIC,
            DeploymentFailedSchema,
            create(DeploymentFailedSchema, {
              deploymentId,
              projectId: target.projectId,
              teamId: target.teamId,
              trainingJobId: target.trainingJobId,
              reason,
            }),
            target.projectId,
          ),
        );
      });
    },
    async releaseJob(trainingJobId, reason, at) {
      const { count } = await prisma.deployment.updateMany({
        where: { trainingJobId, status: { in: ['deploying', 'active'] } },
        data: { status: 'released', reason, endedAt: at },
      });
      return count;
    },
  };
}
