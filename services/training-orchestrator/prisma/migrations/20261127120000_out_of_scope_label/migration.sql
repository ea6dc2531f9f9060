-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "out_of_scope_label" TEXT;
