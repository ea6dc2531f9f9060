-- Issues found while the file of a version was made (feedback rows that could not be converted), merged into its report.
ALTER TABLE "dataset_versions" ADD COLUMN "notes" JSONB;

-- CreateTable
CREATE TABLE "feedback_examples" (
    "inference_id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "task" TEXT NOT NULL,
    "verdict" TEXT NOT NULL,
    "rows" JSONB NOT NULL,
    "issues" JSONB NOT NULL,
    "submitted_at" TIMESTAMPTZ(3) NOT NULL,
    "pending" BOOLEAN NOT NULL DEFAULT true,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "feedback_examples_pkey" PRIMARY KEY ("inference_id")
);

-- CreateIndex
CREATE INDEX "feedback_examples_team_id_project_id_inference_id_idx" ON "feedback_examples"("team_id", "project_id", "inference_id");
