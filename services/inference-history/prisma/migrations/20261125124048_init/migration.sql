-- CreateTable
CREATE TABLE "inference_records" (
    "id" UUID NOT NULL,
    "team_id" UUID NOT NULL,
    "key_id" TEXT NOT NULL DEFAULT '',
    "user_id" TEXT NOT NULL DEFAULT '',
    "project_id" TEXT,
    "model_id" TEXT NOT NULL,
    "training_job_id" TEXT,
    "base_model" TEXT NOT NULL DEFAULT '',
    "task" TEXT NOT NULL,
    "surface" TEXT NOT NULL,
    "inputs" JSONB NOT NULL DEFAULT '[]',
    "messages" JSONB NOT NULL DEFAULT '[]',
    "schema" JSONB,
    "outputs" JSONB NOT NULL DEFAULT '[]',
    "input_tokens" BIGINT NOT NULL DEFAULT 0,
    "output_tokens" BIGINT NOT NULL DEFAULT 0,
    "cache_read_tokens" BIGINT NOT NULL DEFAULT 0,
    "cache_write_tokens" BIGINT NOT NULL DEFAULT 0,
    "reasoning_tokens" BIGINT NOT NULL DEFAULT 0,
    "cost_micro_credits" BIGINT NOT NULL DEFAULT 0,
    "latency_ms" DOUBLE PRECISION NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'succeeded',
    "error_code" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3) NOT NULL,
    "ingested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "llmaj_score" DOUBLE PRECISION,
    "human_verdict" TEXT,
    "corrected_output" JSONB,
    "notes" TEXT,
    "human_feedback_at" TIMESTAMPTZ(3),

    CONSTRAINT "inference_records_pkey" PRIMARY KEY ("id")
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
CREATE INDEX "inference_records_team_id_created_at_id_idx" ON "inference_records"("team_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "inference_records_team_id_model_id_created_at_id_idx" ON "inference_records"("team_id", "model_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "inference_records_team_id_task_created_at_id_idx" ON "inference_records"("team_id", "task", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "inference_records_team_id_project_id_created_at_id_idx" ON "inference_records"("team_id", "project_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "inference_records_team_id_training_job_id_created_at_id_idx" ON "inference_records"("team_id", "training_job_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "inference_records_team_id_latency_ms_idx" ON "inference_records"("team_id", "latency_ms");

-- CreateIndex
CREATE INDEX "inference_records_team_id_llmaj_score_idx" ON "inference_records"("team_id", "llmaj_score");

-- CreateIndex
CREATE INDEX "outbox_events_published_at_id_idx" ON "outbox_events"("published_at", "id");

