-- AlterTable
ALTER TABLE "dataset_versions" ADD COLUMN     "corrections" INTEGER NOT NULL DEFAULT 0;
