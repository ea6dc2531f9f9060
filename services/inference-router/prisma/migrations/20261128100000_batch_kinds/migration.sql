-- What a batch stands for: an Anthropic message batch, or an OpenAI background Response (a batch of one).
ALTER TABLE "chat_batches" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'messages';

-- A background Response is found by the response id minted for its one request.
CREATE INDEX "chat_batch_requests_response_id_idx" ON "chat_batch_requests"("response_id");
