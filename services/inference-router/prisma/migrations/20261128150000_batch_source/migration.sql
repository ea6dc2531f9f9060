-- What an OpenAI Batch was made from (its input file id, endpoint and metadata), null for other kinds.
ALTER TABLE "chat_batches" ADD COLUMN "source" JSONB;
