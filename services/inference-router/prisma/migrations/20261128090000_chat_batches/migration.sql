-- CreateTable
CREATE TABLE "chat_batches" (
    "id" UUID NOT NULL,
    "team_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "cancel_initiated_at" TIMESTAMPTZ(3),

    CONSTRAINT "chat_batches_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_batch_requests" (
    "batch_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "custom_id" TEXT NOT NULL,
    "response_id" UUID NOT NULL,
    "request" BYTEA NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "result" BYTEA,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "chat_batch_requests_pkey" PRIMARY KEY ("batch_id","position")
);

-- CreateIndex
CREATE INDEX "chat_batches_team_id_created_at_idx" ON "chat_batches"("team_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "chat_batch_requests_batch_id_custom_id_key" ON "chat_batch_requests"("batch_id", "custom_id");

-- The worker's claim: only pending requests, by when they are next due.
CREATE INDEX "chat_batch_requests_pending_idx" ON "chat_batch_requests"("next_at") WHERE "state" = 'pending';

-- AddForeignKey
ALTER TABLE "chat_batch_requests" ADD CONSTRAINT "chat_batch_requests_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "chat_batches"("id") ON DELETE CASCADE ON UPDATE CASCADE;
