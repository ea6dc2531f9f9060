-- CreateEnum
CREATE TYPE "JobStatus" AS ENUM ('requested', 'running', 'complete', 'failed', 'deployed', 'cancelled');

-- CreateTable
CREATE TABLE "jobs" (
    "id" UUID NOT NULL,
    "team_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "base_model" TEXT NOT NULL,
    "root_base_model" TEXT NOT NULL,
    "model_name" TEXT NOT NULL,
    "training_type" TEXT NOT NULL,
    "nr_epochs" INTEGER NOT NULL,
    "learning_rate" DOUBLE PRECISION NOT NULL,
    "seed" INTEGER NOT NULL,
    "project_id" TEXT,
    "datasets" JSONB NOT NULL,
    "status" "JobStatus" NOT NULL,
    "metrics" JSONB,
    "progress" JSONB,
    "failure_reason" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "resume_key" TEXT,
    "artifact_key" TEXT,
    "artifact_size" BIGINT,
    "cost_micro_credits" BIGINT NOT NULL DEFAULT 0,
    "lease_owner" TEXT,
    "lease_token" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "job_logs" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "timestamp" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "level" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "source" TEXT NOT NULL,

    CONSTRAINT "job_logs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "checkpoints" (
    "id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "checkpoint_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "step" BIGINT NOT NULL,
    "key" TEXT NOT NULL,
    "size_bytes" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "evaluations" (
    "id" UUID NOT NULL,
    "team_id" TEXT NOT NULL,
    "job_id" UUID NOT NULL,
    "dataset_name" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "metrics" JSONB,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "evaluations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox_events" (
    "id" BIGSERIAL NOT NULL,
    "topic" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "payload" BYTEA NOT NULL,
    "headers" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "jobs_team_id_created_at_idx" ON "jobs"("team_id", "created_at");

-- CreateIndex
CREATE INDEX "jobs_status_created_at_idx" ON "jobs"("status", "created_at");

-- CreateIndex
CREATE INDEX "job_logs_job_id_id_idx" ON "job_logs"("job_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "checkpoints_job_id_checkpoint_id_key" ON "checkpoints"("job_id", "checkpoint_id");

-- CreateIndex
CREATE INDEX "evaluations_team_id_idx" ON "evaluations"("team_id");

-- CreateIndex
CREATE INDEX "outbox_events_published_at_id_idx" ON "outbox_events"("published_at", "id");

-- AddForeignKey
ALTER TABLE "job_logs" ADD CONSTRAINT "job_logs_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "checkpoints" ADD CONSTRAINT "checkpoints_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

