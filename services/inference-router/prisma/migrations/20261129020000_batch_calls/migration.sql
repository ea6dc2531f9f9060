-- What a batch request runs: chat (a ChatRequest) or embed (an embeddings call of an OpenAI batch).
ALTER TABLE "chat_batch_requests" ADD COLUMN "call" TEXT NOT NULL DEFAULT 'chat';
