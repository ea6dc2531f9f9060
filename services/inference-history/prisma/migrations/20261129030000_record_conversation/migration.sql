-- The OpenAI conversation a stored Responses call belongs to (null for none).
ALTER TABLE "inference_records" ADD COLUMN "conversation_id" UUID;
