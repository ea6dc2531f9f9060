-- The figures of a progress line (step, total_steps, epoch, train_loss), null on other lines.
ALTER TABLE "job_logs" ADD COLUMN "metrics" JSONB;
