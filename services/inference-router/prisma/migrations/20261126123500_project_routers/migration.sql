-- CreateTable
CREATE TABLE "project_routers" (
    "project_id" UUID NOT NULL,
    "team_id" TEXT NOT NULL,
    "candidates" TEXT[],
    "reference_model" TEXT NOT NULL,
    "max_prompt_tokens" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "project_routers_pkey" PRIMARY KEY ("project_id")
);

-- AddForeignKey
ALTER TABLE "project_routers" ADD CONSTRAINT "project_routers_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
