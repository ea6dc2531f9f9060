-- OpenAI conversations (the Conversations API): ordered items that Responses calls read and extend.
CREATE TABLE "conversations" (
    "id" UUID NOT NULL,
    "team_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "next_position" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "conversations_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "conversations_team_id_created_at_idx" ON "conversations"("team_id", "created_at");

CREATE TABLE "conversation_items" (
    "id" UUID NOT NULL,
    "conversation_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "role" TEXT NOT NULL DEFAULT '',
    "texts" JSONB NOT NULL DEFAULT '[]',
    "call_id" TEXT NOT NULL DEFAULT '',
    "name" TEXT NOT NULL DEFAULT '',
    "arguments" TEXT NOT NULL DEFAULT '',
    "output" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "conversation_items_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "conversation_items_conversation_id_position_key" ON "conversation_items"("conversation_id", "position");

ALTER TABLE "conversation_items" ADD CONSTRAINT "conversation_items_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
