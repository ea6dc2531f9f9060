-- Judge scores (issue 16): the judge's result and queue state on each record, and per-project settings.
ALTER TABLE "inference_records"
  ADD COLUMN "judge_status" TEXT,
  ADD COLUMN "judge_rationale" TEXT,
  ADD COLUMN "judge_kind" TEXT,
  ADD COLUMN "judge_model" TEXT,
  ADD COLUMN "judge_error" TEXT,
  ADD COLUMN "judge_attempts" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "judge_next_at" TIMESTAMPTZ(3),
  ADD COLUMN "judged_at" TIMESTAMPTZ(3);

-- The worker's queue: pending records by when they are claimable (nearly every record has a null status).
CREATE INDEX "inference_records_judge_status_judge_next_at_idx" ON "inference_records"("judge_status", "judge_next_at");

CREATE TABLE "judge_settings" (
    "project_id" TEXT NOT NULL,
    "team_id" UUID NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT false,
    "sample_rate" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "kind" TEXT NOT NULL DEFAULT 'builtin',
    "judge_model" TEXT NOT NULL DEFAULT '',
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "judge_settings_pkey" PRIMARY KEY ("project_id")
);
