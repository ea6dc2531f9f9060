-- OpenAI's `metadata` of a stored compatible call, filtered on by the stored-completions list (per surface). The
-- pairs are also kept as JSON `[key, value]` strings under a GIN index, so a metadata filter is an indexed `@>`.
ALTER TABLE "inference_records" ADD COLUMN "metadata" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN "metadata_pairs" TEXT[] DEFAULT ARRAY[]::TEXT[];

CREATE INDEX "inference_records_team_id_surface_created_at_id_idx" ON "inference_records"("team_id", "surface", "created_at" DESC, "id" DESC);

CREATE INDEX "inference_records_metadata_pairs_idx" ON "inference_records" USING GIN ("metadata_pairs");
