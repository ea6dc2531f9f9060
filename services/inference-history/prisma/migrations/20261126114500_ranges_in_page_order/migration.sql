-- A wide latency or score range is filtered inside the team's page-order index (index-only), not sorted.
DROP INDEX "inference_records_team_id_created_at_id_idx";

CREATE INDEX "inference_records_team_page_order_idx" ON "inference_records"("team_id", "created_at" DESC, "id" DESC, "latency_ms", "llmaj_score");
