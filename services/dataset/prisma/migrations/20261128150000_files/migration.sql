-- Files uploaded through the OpenAI-compatible Files API. The bytes are in the `datasets` bucket under blob_key.
-- CreateTable
CREATE TABLE "files" (
    "id" UUID NOT NULL,
    "team_id" TEXT NOT NULL,
    "filename" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "bytes" BIGINT NOT NULL,
    "blob_key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "files_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "files_team_id_created_at_idx" ON "files"("team_id", "created_at");

-- CreateIndex
CREATE INDEX "files_expires_at_idx" ON "files"("expires_at");
