-- OpenAI's `metadata` of a stored compatible call, filtered on by the stored-completions list (per surface).
ALTER TABLE "inference_records" ADD COLUMN "metadata" JSONB NOT NULL DEFAULT '{}';

CREATE INDEX "inference_records_team_id_surface_created_at_id_idx" ON "inference_records"("team_id", "surface", "created_at" DESC, "id" DESC);
