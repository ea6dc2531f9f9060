-- A job created through the OpenAI-compatible fine-tuning API keeps what it was created from.
ALTER TABLE "jobs" ADD COLUMN "fine_tuning" JSONB;
