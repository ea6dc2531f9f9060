-- What a batch request runs: chat (a ChatRequest) or embed (an OpenAI batch's embeddings call).
ALTER TABLE "chat_batch_requests" ADD COLUMN "call" TEXT NOT NULL DEFAULT 'chat';
